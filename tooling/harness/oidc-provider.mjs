// A real OpenID Provider (the `oidc-provider` package) on an ephemeral port, with interactions that complete
// programmatically: the login prompt signs in as `provider.loginAs`, the consent prompt grants what was asked.
// Test-only: lives in the private tooling package, shared by the identity plugin's SSO tests and the web e2e.
import { createPrivateKey, generateKeyPairSync } from 'node:crypto';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

/** Starts the provider; `redirectUris()` gives Holdfast's callback URLs registered for the client. */
export async function startOpenIdProvider(redirectUris) {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${server.address().port}`;
  // The key is generated as PEM and imported before its JWK export. Exporting the generated KeyObject itself hung a
  // test run for good (Node 20.20): the export holds the key's mutex, allocating the JWK's strings started a garbage
  // collection, and that collection freed the key's generation job, whose destructor waits for the same mutex
  // (gdb: KeyObjectHandle::ExportJWK -> ... -> Heap::CollectGarbage -> ~KeyGenJob -> uv_mutex_lock). An imported
  // key shares its mutex with no job.
  const { privateKey: privatePem } = generateKeyPairSync('rsa', { modulusLength: 2048, privateKeyEncoding: { type: 'pkcs8', format: 'pem' }, publicKeyEncoding: { type: 'spki', format: 'pem' } });
  const signingKey = { ...createPrivateKey(privatePem).export({ format: 'jwk' }), kid: 'test-signing-key', use: 'sig', alg: 'RS256' };

  const state = {
    issuer,
    clientId: 'holdfast-test',
    clientSecret: 'oidc-client-secret-9f2c1e7a5b',
    accounts: new Map(),
    loginAs: '',
    codeTtlSeconds: 60,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(() => resolve()));
    },
  };

  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: state.clientId,
        client_secret: state.clientSecret,
        redirect_uris: redirectUris(),
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [signingKey] },
    cookies: { keys: ['test-cookie-signing-key-1234567890'] },
    pkce: { required: () => true },
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    features: { devInteractions: { enabled: false } },
    ttl: { AuthorizationCode: () => state.codeTtlSeconds, Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 600, IdToken: 600 },
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx, sub) => {
      const account = state.accounts.get(sub);
      if (!account) return undefined;
      return {
        accountId: sub,
        claims: () => ({
          sub,
          email: account.email,
          email_verified: account.emailVerified,
          name: account.name,
          ...(account.groups ? { groups: account.groups } : {}),
        }),
      };
    },
  });

  const callback = provider.callback();
  server.on('request', (req, res) => {
    if (!req.url?.startsWith('/interaction/')) {
      callback(req, res);
      return;
    }
    void finishInteraction(provider, state, req, res).catch((error) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });
  return state;
}

async function finishInteraction(provider, state, req, res) {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: state.loginAs } }, { mergeWithLastSubmission: false });
    return;
  }
  const accountId = details.session.accountId;
  const grant = new provider.Grant({ accountId, clientId: details.params.client_id });
  grant.addOIDCScope(String(details.params.scope));
  await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
}
