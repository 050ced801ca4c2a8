// Issue 41, acceptance 4 for single sign-on: no SSO request of the server carries a secret to another host when the
// identity provider answers with a redirect.
//
// OIDC: a small OpenID provider (node:http on 127.0.0.1, ephemeral port) signs real ID tokens, so that without a
// redirect the sign-in succeeds (the first test proves the fake is good enough for openid-client). Then its discovery
// document, token endpoint or userinfo endpoint answers 301/302/303/307/308 with `Location` on a "trap" server
// (127.0.0.1, another port: another origin). The trap records every request it receives, headers and body, and
// plays the attacker: it serves its own discovery document claiming the honest issuer (so a followed discovery would
// pass the issuer check and send the browser and the client secret to the trap's endpoints).
//
// What a following client would leak: the token request carries the client secret (client_secret_basic:
// `Authorization: Basic base64(client_id:secret)`) and a body with the authorization code and the PKCE verifier;
// the userinfo request carries the access token. A client re-sending them to the Location would hand them to the
// trap, and a followed discovery would point every later request at the trap. The control test at the end runs the
// same flow with such a client injected (through openid-client's `customFetch`) and shows the trap then receives the
// secret, so the "0 requests at the trap" assertions cannot pass by a blind trap.
//
// Holdfast uses openid-client v6, whose transport (oauth4webapi) sends every request with `redirect: 'manual'`: the
// 3xx is the answer and the sign-in fails with a clear error. One dialect (sqlite) is enough here: nothing in this
// file depends on the database, and the PostgreSQL run of DIALECTS would only make ten sign-ins slower.
//
// SAML: the SAML flow (src/sso/saml-flow.ts over @node-saml/node-saml) sends no HTTP request from the server at all:
// the IdP certificate, entity id and SSO URL are configured, never fetched. The SAML test signs in end to end with the
// IdP's entity id and SSO URL on a trap server and `fetch`/`http.request`/`https.request` spied: 0 outbound calls.
import { createSign, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import http, { type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Browser } from './support/browser.js';
import { openDatabase, type TestDatabase } from './support/database.js';
import { Client, setUpAdmin, startIdentityApp, type RunningIdentityApp } from './support/http.js';
import { readAuthnRequest, TestSamlIdp } from './support/saml-idp.js';
import { testSealer } from './support/test-sealer.js';

// The control test swaps in a client that follows redirects keeping headers and body; every other test runs the
// real openid-client untouched (`naive.follow` is false).
const naive = vi.hoisted(() => ({ follow: false }));
vi.mock('openid-client', async (importOriginal) => {
  const original = await importOriginal<typeof import('openid-client')>();
  /** What a redirect-following HTTP client without the drop rule sends: the same method, headers and body, at every hop. */
  const followingFetch = async (url: string, init: RequestInit): Promise<Response> => {
    let target = url;
    for (let hop = 0; hop < 5; hop++) {
      const response = await fetch(target, { ...init, redirect: 'manual' });
      const location = response.headers.get('location');
      if (response.status < 300 || response.status > 399 || !location) return response;
      await response.arrayBuffer();
      target = new URL(location, target).href;
    }
    throw new Error('too many redirects');
  };
  return {
    ...original,
    discovery: (...args: Parameters<typeof original.discovery>) => {
      if (!naive.follow) return original.discovery(...args);
      const [server, clientId, metadata, auth, options] = args;
      return original.discovery(server, clientId, metadata, auth, { ...options, [original.customFetch]: followingFetch as never });
    },
  };
});

const PROVIDER_ID = 'corp';
// Letters only: oauth4webapi percent-encodes even `-` inside Basic credentials.
const CLIENT_ID = 'holdfastclient';
// Letters and digits only, so its form-encoded, URL-encoded and Basic forms are the same text.
const CLIENT_SECRET = `s3cret${randomBytes(16).toString('hex')}`;
const ACCESS_TOKEN = `at${randomBytes(16).toString('hex')}`;
const ALICE = { sub: 'alice-0001', email: 'alice@corp.example.test', name: 'Alice Corp' };
const REDIRECTS = [301, 302, 303, 307, 308] as const;
/** How Holdfast names a provider's redirect in the error (src/sso/oidc-flow.ts). */
const NOT_FOLLOWED = 'a redirect, not followed; redirects of the identity provider are refused so no secret goes to another host';

/** One request as a server saw it. */
interface Recorded {
  method: string;
  url: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

interface TestServer {
  url: string;
  requests: Recorded[];
  close(): Promise<void>;
}

async function listen(handle: (request: Recorded, response: ServerResponse, base: string) => void): Promise<TestServer> {
  const requests: Recorded[] = [];
  let base = '';
  const server: Server = http.createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const recorded = { method: request.method ?? 'GET', url: request.url ?? '/', headers: { ...request.headers }, body: Buffer.concat(chunks).toString('utf8') };
      requests.push(recorded);
      handle(recorded, response, base);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function json(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  response.end(JSON.stringify(body));
}

function redirect(response: ServerResponse, status: number, location: string): void {
  response.writeHead(status, { location, 'content-type': 'text/plain' });
  response.end(`see ${location}`);
}

const base64url = (value: Buffer | string) => Buffer.from(value).toString('base64url');

function signJwt(key: KeyObject, kid: string, claims: Record<string, unknown>): string {
  const input = `${base64url(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid }))}.${base64url(JSON.stringify(claims))}`;
  return `${input}.${createSign('RSA-SHA256').update(input).sign(key).toString('base64url')}`;
}

/** Every way the client secret or the access token could appear in a request: raw, base64 of itself, or inside Basic credentials. */
function carriesSecret(request: Recorded, secret: string): boolean {
  const texts = [request.url, request.body, ...Object.values(request.headers).flat().filter((v): v is string => typeof v === 'string')];
  const decoded = texts.flatMap((text) => [...text.matchAll(/basic\s+([A-Za-z0-9+/=_-]+)/gi)].map((match) => Buffer.from(match[1]!, 'base64').toString('utf8')));
  const forms = [secret, Buffer.from(secret).toString('base64'), base64url(secret), encodeURIComponent(secret)];
  return [...texts, ...decoded].some((text) => forms.some((form) => text.includes(form)));
}

type Redirecting = 'discovery' | 'token' | 'userinfo';

interface FakeProvider extends TestServer {
  issuer: string;
  /** Which endpoint answers with a redirect to the trap, and with which status. */
  redirect?: { endpoint: Redirecting; status: number };
  /** Leave the email out of the ID token, so Holdfast asks the userinfo endpoint. */
  emailInUserInfoOnly: boolean;
}

/** The attacker's server: records everything; answers like an OpenID provider claiming `honestIssuer`. */
function startTrap(honestIssuer: () => string): Promise<TestServer> {
  return listen((request, response, base) => {
    const url = new URL(request.url, base);
    if (url.pathname.endsWith('/.well-known/openid-configuration')) {
      json(response, 200, {
        issuer: honestIssuer(),
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        jwks_uri: `${base}/jwks`,
        userinfo_endpoint: `${base}/userinfo`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
      });
    } else if (url.pathname === '/authorize') {
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', 'trap-code');
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      redirect(response, 302, back.href);
    } else {
      json(response, 400, { error: 'invalid_request', error_description: 'trap' });
    }
  });
}

/** A minimal OpenID provider: discovery, authorization (straight back with a code), token (signed ID token), JWKS, userinfo. */
async function startProvider(trap: TestServer): Promise<FakeProvider> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const kid = 'test-key-1';
  const codes = new Map<string, { nonce: string; redirectUri: string }>();
  const provider = {} as FakeProvider;
  const server = await listen((request, response, base) => {
    const issuer = `${base}/op`;
    const url = new URL(request.url, base);
    const redirecting = provider.redirect;
    const toTrap = (endpoint: Redirecting) => {
      if (redirecting?.endpoint !== endpoint) return false;
      redirect(response, redirecting.status, `${trap.url}${url.pathname}${url.search}`);
      return true;
    };
    if (url.pathname === '/op/.well-known/openid-configuration') {
      if (toTrap('discovery')) return;
      json(response, 200, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        userinfo_endpoint: `${issuer}/userinfo`,
        response_types_supported: ['code'],
        grant_types_supported: ['authorization_code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
        token_endpoint_auth_methods_supported: ['client_secret_basic'],
        code_challenge_methods_supported: ['S256'],
        scopes_supported: ['openid', 'email', 'profile'],
      });
    } else if (url.pathname === '/op/authorize') {
      // No login page: the browser goes straight back to Holdfast's callback with a code and the given state.
      const code = randomBytes(12).toString('hex');
      const redirectUri = url.searchParams.get('redirect_uri')!;
      codes.set(code, { nonce: url.searchParams.get('nonce') ?? '', redirectUri });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      redirect(response, 302, back.href);
    } else if (url.pathname === '/op/token' && request.method === 'POST') {
      if (toTrap('token')) return;
      const form = new URLSearchParams(request.body);
      const expectedAuth = `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`;
      if (request.headers.authorization !== expectedAuth) return json(response, 401, { error: 'invalid_client' });
      const issued = codes.get(form.get('code') ?? '');
      codes.delete(form.get('code') ?? '');
      if (!issued || form.get('redirect_uri') !== issued.redirectUri) return json(response, 400, { error: 'invalid_grant' });
      const now = Math.floor(Date.now() / 1000);
      const idToken = signJwt(privateKey, kid, {
        iss: issuer,
        aud: CLIENT_ID,
        sub: ALICE.sub,
        iat: now,
        exp: now + 300,
        nonce: issued.nonce,
        name: ALICE.name,
        ...(provider.emailInUserInfoOnly ? {} : { email: ALICE.email, email_verified: true }),
      });
      json(response, 200, { access_token: ACCESS_TOKEN, token_type: 'Bearer', expires_in: 300, id_token: idToken });
    } else if (url.pathname === '/op/jwks') {
      json(response, 200, { keys: [{ ...publicKey.export({ format: 'jwk' }), kid, alg: 'RS256', use: 'sig' }] });
    } else if (url.pathname === '/op/userinfo') {
      if (toTrap('userinfo')) return;
      if (request.headers.authorization !== `Bearer ${ACCESS_TOKEN}`) return json(response, 401, { error: 'invalid_token' });
      json(response, 200, { sub: ALICE.sub, email: ALICE.email, email_verified: true, name: ALICE.name });
    } else {
      json(response, 404, { error: 'not_found' });
    }
  });
  return Object.assign(provider, server, { issuer: `${server.url}/op`, emailInUserInfoOnly: false });
}

let db: TestDatabase | undefined;
let app: RunningIdentityApp | undefined;
let op: FakeProvider | undefined;
let trap: TestServer | undefined;
afterEach(async () => {
  naive.follow = false;
  vi.restoreAllMocks();
  await app?.close();
  await op?.close();
  await trap?.close();
  await db?.close();
  app = op = trap = db = undefined;
});

describe('OIDC requests of the server never carry a secret to another host (issue 41)', () => {
  async function start(options: { redirect?: FakeProvider['redirect']; emailInUserInfoOnly?: boolean } = {}) {
    db = await openDatabase('sqlite');
    app = await startIdentityApp(db, { sealer: testSealer() });
    trap = await startTrap(() => op!.issuer);
    op = await startProvider(trap);
    op.redirect = options.redirect;
    op.emailInUserInfoOnly = options.emailInUserInfoOnly ?? false;
    const admin = await setUpAdmin(app);
    const created = await admin.call('POST', '/api/sso/providers', {
      json: { providerId: PROVIDER_ID, type: 'oidc', name: 'Corp SSO', issuer: op.issuer, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, scopes: 'openid email profile' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
  }

  const startUrl = () => `${app!.url}/api/auth/sso/oidc/${PROVIDER_ID}/start?redirectTo=%2Fjobs`;
  const isCallback = (url: string) => url.includes('/api/auth/sso/oidc/');

  /** Follows the sign-in like a browser up to Holdfast's last answer (the landing page redirect or an error). */
  async function signIn() {
    const browser = new Browser();
    const last = await browser.follow(startUrl(), (next) => next.startsWith(app!.url) && !isCallback(next));
    const client = new Client(app!.url);
    const session = browser.cookies.get('holdfast_session');
    client.cookie = session ? `holdfast_session=${session}` : undefined;
    return { browser, last, session: await client.call('GET', '/api/auth/session') };
  }

  function expectNothingAtTheTrap() {
    const leaking = trap!.requests.filter((request) => carriesSecret(request, CLIENT_SECRET) || carriesSecret(request, ACCESS_TOKEN));
    expect(leaking, 'requests carrying the client secret or the access token at the second host').toEqual([]);
    // Stricter: not even a request without a secret (the code and the PKCE verifier are credentials as well).
    expect(trap!.requests.map((r) => `${r.method} ${r.url}`)).toEqual([]);
  }

  it('the fake provider is a valid one: without a redirect the sign-in succeeds, the secret going only to its token endpoint', async () => {
    await start({ emailInUserInfoOnly: true });
    const { last, session } = await signIn();
    expect(last.status, last.body).toBe(303);
    expect(last.location).toBe(`${app!.url}/jobs`);
    expect(session.status).toBe(200);
    expect(session.body.user.email).toBe(ALICE.email);
    const paths = op!.requests.map((r) => `${r.method} ${new URL(r.url, op!.url).pathname}`);
    expect(paths).toEqual(expect.arrayContaining(['POST /op/token', 'GET /op/userinfo']));
    expect(op!.requests.some((r) => r.url === '/op/token' && carriesSecret(r, CLIENT_SECRET))).toBe(true);
    expectNothingAtTheTrap();
  });

  it.each(REDIRECTS)('token endpoint answering %i to another host: the secret is not re-sent, the callback refuses with 400', async (status) => {
    await start({ redirect: { endpoint: 'token', status } });
    const { browser, last, session } = await signIn();
    // The request carrying the secret was made, to the configured provider only.
    expect(op!.requests.filter((r) => r.url === '/op/token' && carriesSecret(r, CLIENT_SECRET))).toHaveLength(1);
    expectNothingAtTheTrap();
    expect(last.url).toMatch(new RegExp(`/api/auth/sso/oidc/${PROVIDER_ID}/callback\\?`));
    expect(last.status, last.body).toBe(400);
    expect(last.json.error).toBe(`OIDC sign-in failed: unexpected HTTP response status code (HTTP ${status}: ${NOT_FOLLOWED})`);
    expect(browser.cookies.has('holdfast_session')).toBe(false);
    expect(session.status).toBe(401);
  });

  it.each(REDIRECTS)('userinfo endpoint answering %i to another host: the access token is not re-sent, the callback refuses with 400', async (status) => {
    await start({ redirect: { endpoint: 'userinfo', status }, emailInUserInfoOnly: true });
    const { browser, last, session } = await signIn();
    expect(op!.requests.filter((r) => r.url === '/op/userinfo' && carriesSecret(r, ACCESS_TOKEN))).toHaveLength(1);
    expectNothingAtTheTrap();
    expect(last.status, last.body).toBe(400);
    expect(last.json.error).toBe(`OIDC sign-in failed: unexpected HTTP response status code (HTTP ${status}: ${NOT_FOLLOWED})`);
    expect(browser.cookies.has('holdfast_session')).toBe(false);
    expect(session.status).toBe(401);
  });

  it.each(REDIRECTS)('discovery answering %i to another host: not followed, the sign-in does not start', async (status) => {
    await start({ redirect: { endpoint: 'discovery', status } });
    const { browser, last, session } = await signIn();
    expectNothingAtTheTrap();
    // Nothing reached the token endpoint either: the flow stopped before the browser left Holdfast.
    expect(op!.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /op/.well-known/openid-configuration']);
    // A provider that answers discovery unexpectedly is a gateway failure (as an unreachable one, sso-oidc.test.ts):
    // 502 with the reason, not a 500, and no redirect to anywhere.
    expect(last.url).toBe(startUrl());
    expect(last.status, last.body).toBe(502);
    expect(last.location).toBeUndefined();
    expect(last.json.error).toBe(`OIDC discovery failed for "${PROVIDER_ID}" at ${op!.url}: unexpected HTTP response status code (HTTP ${status}: ${NOT_FOLLOWED})`);
    expect(browser.cookies.has('holdfast_session')).toBe(false);
    expect(session.status).toBe(401);
  });

  // The control: the same flows with a client that follows redirects keeping its headers and body. The trap then
  // receives the secret, so the assertions above would fail if Holdfast's OIDC client ever followed redirects.
  it.each([
    { endpoint: 'token' as const, status: 307 },
    { endpoint: 'discovery' as const, status: 302 },
  ])('control: a redirect-following client would hand the client secret to the trap ($endpoint, $status)', async (redirecting) => {
    naive.follow = true;
    await start({ redirect: redirecting });
    await signIn();
    expect(trap!.requests.filter((request) => carriesSecret(request, CLIENT_SECRET)).length).toBeGreaterThan(0);
  });
});

describe('SAML sends no HTTP request from the server (issue 41)', () => {
  it('a full SAML sign-in (metadata, start, ACS) makes 0 outbound requests, with the IdP entity id and SSO URL on a trap', async () => {
    trap = await startTrap(() => 'none');
    const idp = new TestSamlIdp(`${trap.url}/realms/holdfast`, `${trap.url}/realms/holdfast/protocol/saml`);
    db = await openDatabase('sqlite');
    app = await startIdentityApp(db);
    const admin = await setUpAdmin(app);
    const spEntityId = 'https://holdfast.example.test/saml';
    const created = await admin.call('POST', '/api/sso/providers', {
      json: { providerId: 'corp-saml', type: 'saml', name: 'Corp SAML', clientId: spEntityId, issuer: idp.entityId, samlEntryPoint: idp.ssoUrl, samlCertificate: idp.key.certificate },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);

    // Every fetch not addressed to Holdfast itself (the test's own browser), and every http(s).request, is outbound.
    const fetchSpy = vi.spyOn(globalThis, 'fetch');
    const httpSpy = vi.spyOn(http, 'request');
    const httpGetSpy = vi.spyOn(http, 'get');
    const httpsSpy = vi.spyOn(https, 'request');
    const httpsGetSpy = vi.spyOn(https, 'get');
    const browser = new Browser();
    const metadata = await browser.request(`${app.url}/api/auth/sso/saml/corp-saml/metadata`);
    expect(metadata.status).toBe(200);
    const started = await browser.request(`${app.url}/api/auth/sso/saml/corp-saml/start?redirectTo=%2Fhistory`);
    expect(started.status).toBe(302);
    expect(started.location!.startsWith(idp.ssoUrl)).toBe(true);
    const request = readAuthnRequest(started.location!);
    const SAMLResponse = idp.response({ inResponseTo: request.id, acsUrl: request.acsUrl, audience: request.spEntityId, nameId: 'bob-7', attributes: { email: 'bob@corp.example.test' } });
    const posted = await browser.request(request.acsUrl, { form: { SAMLResponse, RelayState: request.relayState ?? '' } });
    expect(posted.status, posted.body).toBe(303);
    expect(browser.cookies.has('holdfast_session')).toBe(true);

    const outboundFetches = fetchSpy.mock.calls.map(([input]) => String(input instanceof Request ? input.url : input)).filter((url) => !url.startsWith(app!.url));
    expect(outboundFetches).toEqual([]);
    expect([...httpSpy.mock.calls, ...httpGetSpy.mock.calls, ...httpsSpy.mock.calls, ...httpsGetSpy.mock.calls]).toEqual([]);
    expect(trap.requests).toEqual([]);
    // The spies saw the browser's own requests, so they were live.
    expect(fetchSpy.mock.calls.length).toBeGreaterThanOrEqual(3);
  });
});
