// A real OpenID Provider (the `oidc-provider` package) on an ephemeral port, with interactions that complete
// programmatically: the login prompt signs in as `provider.loginAs`, the consent prompt grants what was asked.
// The same helper as plugins/identity/test/support/oidc-provider.ts (test files stay inside their package).
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';

/** An account of the test provider. */
export interface TestAccount {
  sub: string;
  email: string;
  emailVerified: boolean;
  name: string;
  groups?: string[];
}

/** A running provider and the knobs the tests turn. */
export interface TestOpenIdProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  accounts: Map<string, TestAccount>;
  /** Subject the next login interaction signs in as. */
  loginAs: string;
  /** Authorization code lifetime in seconds (default 60). */
  codeTtlSeconds: number;
  close(): Promise<void>;
}

/** Starts the provider; `redirectUri` is Holdfast's callback URL registered for the client. */
export async function startOpenIdProvider(redirectUris: () => string[]): Promise<TestOpenIdProvider> {
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'test-signing-key', use: 'sig', alg: 'RS256' };

  const state: TestOpenIdProvider = {
    issuer,
    clientId: 'holdfast-test',
    clientSecret: 'oidc-client-secret-9f2c1e7a5b',
    accounts: new Map(),
    loginAs: '',
    codeTtlSeconds: 60,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
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
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    if (!req.url?.startsWith('/interaction/')) {
      callback(req, res);
      return;
    }
    void finishInteraction(provider, state, req, res).catch((error: unknown) => {
      res.statusCode = 500;
      res.end(String(error));
    });
  });
  return state;
}

async function finishInteraction(provider: Provider, state: TestOpenIdProvider, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  if (details.prompt.name === 'login') {
    await provider.interactionFinished(req, res, { login: { accountId: state.loginAs } }, { mergeWithLastSubmission: false });
    return;
  }
  const accountId = details.session!.accountId;
  const grant = new provider.Grant({ accountId, clientId: details.params.client_id as string });
  grant.addOIDCScope(String(details.params.scope));
  await provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
}
