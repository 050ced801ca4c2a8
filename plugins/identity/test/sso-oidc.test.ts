// OIDC single sign-on end to end against a real OpenID Provider (`oidc-provider`) on an ephemeral port: the test
// browser follows every redirect (Holdfast -> provider -> interactions -> Holdfast callback) like a real one.
import type { EntityManager } from '@mikro-orm/core';
import { afterEach, describe, expect, it } from 'vitest';
import { startOpenIdProvider, type TestOpenIdProvider } from '@holdfast/tooling/harness/oidc-provider';
import { AccountEntity } from '../src/entities/account.js';
import { SsoProviderEntity } from '../src/entities/sso-provider.js';
import { UserEntity } from '../src/entities/user.js';
import { SsoProviderStore } from '../src/sso/provider-store.js';
import { Browser } from './support/browser.js';
import { testSealer } from './support/test-sealer.js';
import { DIALECTS, openDatabase, type TestDatabase } from './support/database.js';
import { Client, setUpAdmin, startIdentityApp, type RunningIdentityApp } from './support/http.js';

const sealer = testSealer();
let db: TestDatabase | undefined;
let app: RunningIdentityApp | undefined;
let idp: TestOpenIdProvider | undefined;
afterEach(async () => {
  await app?.close();
  await idp?.close();
  await db?.close();
  app = idp = db = undefined;
});

const PROVIDER_ID = 'corp';
const ALICE = { sub: 'alice-0001', email: 'alice@corp.example.test', emailVerified: true, name: 'Alice Corp', groups: ['backup-operators', 'staff'] };

describe.each(DIALECTS)('OIDC single sign-on against a real OpenID Provider on %s', (dialect) => {
  async function startServers(env?: NodeJS.ProcessEnv) {
    db = await openDatabase(dialect);
    app = await startIdentityApp(db, { env, sealer });
    idp = await startOpenIdProvider(() => [`${app!.url}/api/auth/sso/oidc/${PROVIDER_ID}/callback`]);
    idp.accounts.set(ALICE.sub, ALICE);
    idp.loginAs = ALICE.sub;
  }

  const providerInput = (extra: Record<string, unknown> = {}) => ({
    providerId: PROVIDER_ID,
    type: 'oidc' as const,
    name: 'Corp SSO',
    issuer: idp!.issuer,
    clientId: idp!.clientId,
    clientSecret: idp!.clientSecret,
    scopes: 'openid email profile groups',
    ...extra,
  });

  async function start(options: { env?: NodeJS.ProcessEnv; provider?: Record<string, unknown> } = {}) {
    await startServers(options.env);
    const admin = await setUpAdmin(app!);
    const created = await admin.call('POST', '/api/sso/providers', { json: providerInput(options.provider) });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return { admin, provider: created.body };
  }

  const startUrl = () => `${app!.url}/api/auth/sso/oidc/${PROVIDER_ID}/start?redirectTo=%2Fjobs`;
  const isCallback = (url: string) => url.includes('/api/auth/sso/oidc/');

  async function signInAsBrowser(browser = new Browser()) {
    const last = await browser.follow(startUrl(), (next) => next.startsWith(app!.url) && !isCallback(next));
    return { browser, last };
  }

  async function sessionOf(browser: Browser) {
    const session = browser.cookies.get('holdfast_session');
    const client = new Client(app!.url);
    client.cookie = session ? `holdfast_session=${session}` : undefined;
    return client.call('GET', '/api/auth/session');
  }

  it('signs in end to end with PKCE, state and nonce, provisions the user on first login, and audits and emits events', async () => {
    await start();
    const seen: string[] = [];
    app!.events.on('user_created', (e) => void seen.push(`created:${e.email}`));
    app!.events.on('user_login', (e) => void seen.push(`login:${e.email}:${e.userName}`));
    const browser = new Browser();
    const first = await browser.request(startUrl());
    expect(first.status).toBe(302);
    const authorize = new URL(first.location!);
    expect(authorize.origin).toBe(idp!.issuer);
    expect(authorize.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authorize.searchParams.get('state')).toBe(browser.cookies.get('holdfast_sso_state'));
    expect(authorize.searchParams.get('nonce')).toBeTruthy();
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${app!.url}/api/auth/sso/oidc/${PROVIDER_ID}/callback`);

    const last = await browser.follow(first.location!, (next) => next.startsWith(app!.url) && !isCallback(next));
    expect(last.status, last.body).toBe(303);
    expect(last.location).toBe(`${app!.url}/jobs`);
    const session = await sessionOf(browser);
    expect(session.status).toBe(200);
    expect(session.body.user.email).toBe(ALICE.email);
    expect(session.body.user.name).toBe(ALICE.name);
    expect(session.body.user.emailVerified).toBe(true);
    expect(seen).toEqual([`created:${ALICE.email}`, `login:${ALICE.email}:${ALICE.name}`]);

    const em = db!.database.em();
    const user = await em.findOneOrFail(UserEntity, { email: ALICE.email });
    expect(await em.count(AccountEntity, { userId: user.id, providerId: `sso:${PROVIDER_ID}`, accountId: ALICE.sub })).toBe(1);
    const audit = await app!.services.audit.list({ page: 1, pageSize: 50, userId: user.id });
    const actions = audit.entries.map((entry) => `${entry.action}:${entry.resource}`);
    expect(actions).toContain('CREATE:user');
    expect(actions).toContain('LOGIN:session');
    expect(JSON.parse(audit.entries.find((e) => e.action === 'LOGIN')!.details!)).toMatchObject({ authMethod: 'sso:oidc', providerId: PROVIDER_ID, linkedBy: 'provisioned' });

    // A second sign-in finds the linked account and creates no second user.
    const again = await signInAsBrowser();
    expect(again.last.status, again.last.body).toBe(303);
    expect(await em.fork().count(UserEntity, { email: ALICE.email })).toBe(1);
  });

  it('with allowProvisioning off an unknown email is refused clearly; an existing user is linked by verified email', async () => {
    const { admin } = await start({ provider: { allowProvisioning: false } });
    const refused = await signInAsBrowser();
    expect(refused.last.status).toBe(403);
    expect(refused.last.json.error).toMatch(/No Holdfast account exists for alice@corp\.example\.test.*allowProvisioning is off/);
    expect(await db!.database.em().count(UserEntity, { email: ALICE.email })).toBe(0);

    const created = await admin.call('POST', '/api/users', { json: { name: 'Alice (local)', email: ALICE.email, password: 'local password 123' } });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const linked = await signInAsBrowser();
    expect(linked.last.status, linked.last.body).toBe(303);
    expect((await sessionOf(linked.browser)).body.user.id).toBe(created.body.id);
  });

  it('audits a refused callback as login.failed with the reason and the email when known, never the code or state (issue 47.5)', async () => {
    await start({ provider: { allowProvisioning: false } });
    const failures = async () => (await app!.services.audit.list({ page: 1, pageSize: 20, action: 'login.failed' })).entries;
    const browser = new Browser();
    const atCallback = await browser.follow(startUrl(), isCallback);
    const callback = new URL(atCallback.location!);
    const code = callback.searchParams.get('code')!;
    const state = callback.searchParams.get('state')!;
    expect(code).toBeTruthy();
    const refused = await browser.request(callback.href);
    expect(refused.status).toBe(403);
    const [entry, ...others] = await failures();
    expect(others).toHaveLength(0);
    expect(entry).toMatchObject({ resource: 'session', userId: null, actorName: ALICE.email, resourceName: ALICE.email });
    expect(JSON.parse(entry!.details!)).toEqual({ email: ALICE.email, reason: 'sso-no-account', knownUser: false, authMethod: 'sso:oidc', providerId: PROVIDER_ID });
    expect(JSON.stringify(entry)).not.toContain(code);
    expect(JSON.stringify(entry)).not.toContain(state);

    // The provider answering with an error: no account to name, and not its description either.
    const again = new Browser();
    const started = new URL((await again.request(startUrl())).location!);
    const denied = await again.request(`${app!.url}/api/auth/sso/oidc/${PROVIDER_ID}/callback?error=access_denied&error_description=user%20said%20no&state=${started.searchParams.get('state')}`);
    expect(denied.status).toBe(400);
    const latest = await failures();
    expect(latest).toHaveLength(2);
    expect(JSON.parse(latest[0]!.details!)).toEqual({ email: '', reason: 'sso-provider-error', knownUser: false, authMethod: 'sso:oidc', providerId: PROVIDER_ID });
    expect(latest[0]!.details).not.toContain('user said no');
  });

  it('does not link an existing account when the provider has not verified the email', async () => {
    const { admin } = await start();
    idp!.accounts.set(ALICE.sub, { ...ALICE, emailVerified: false });
    await admin.call('POST', '/api/users', { json: { name: 'Alice', email: ALICE.email, password: 'local password 123' } });
    const refused = await signInAsBrowser();
    expect(refused.last.status).toBe(403);
    expect(refused.last.json.error).toMatch(/has not verified alice@corp\.example\.test/);
  });

  it('enforces the domain restriction', async () => {
    await start({ provider: { domain: 'other.example.test' } });
    const refused = await signInAsBrowser();
    expect(refused.last.status).toBe(403);
    expect(refused.last.json.error).toMatch(/limited to @other\.example\.test/);
  });

  it('maps the group claim to a Holdfast group and syncs it on every login', async () => {
    const { admin } = await start();
    const operators = (await admin.call('POST', '/api/groups', { json: { name: 'Operators', permissions: ['jobs:read', 'jobs:execute'] } })).body;
    const viewers = (await admin.call('POST', '/api/groups', { json: { name: 'Viewers', permissions: ['jobs:read'] } })).body;
    const providerRow = await db!.database.em().findOneOrFail(SsoProviderEntity, { providerId: PROVIDER_ID });
    const updated = await admin.call('PUT', `/api/sso/providers/${providerRow.id}`, {
      json: { groupClaim: 'groups', groupMappings: [{ claimValue: 'backup-operators', groupId: operators.id }, { claimValue: 'staff', groupId: viewers.id }] },
    });
    expect(updated.status, JSON.stringify(updated.body)).toBe(200);
    expect(updated.body.hasClientSecret).toBe(true);

    const first = await signInAsBrowser();
    expect(first.last.status, first.last.body).toBe(303);
    let session = await sessionOf(first.browser);
    expect(session.body.user.groupId).toBe(operators.id);
    expect(session.body.permissions).toEqual(['jobs:read', 'jobs:execute']);

    idp!.accounts.set(ALICE.sub, { ...ALICE, groups: ['staff'] });
    const second = await signInAsBrowser();
    session = await sessionOf(second.browser);
    expect(session.body.user.groupId).toBe(viewers.id);

    idp!.accounts.set(ALICE.sub, { ...ALICE, groups: ['contractors'] });
    const third = await signInAsBrowser();
    session = await sessionOf(third.browser);
    expect(session.body.user.groupId).toBeNull();
    expect(session.body.permissions).toEqual([]);

    // A mapped group deleted since is skipped: the next matching row wins instead of a dangling group id.
    idp!.accounts.set(ALICE.sub, ALICE);
    expect((await admin.call('DELETE', `/api/groups/${operators.id}`)).status).toBe(204);
    const fourth = await signInAsBrowser();
    session = await sessionOf(fourth.browser);
    expect(session.body.user.groupId).toBe(viewers.id);
    const synced = await app!.services.audit.list({ page: 1, pageSize: 50, action: 'UPDATE', resource: 'user' });
    expect(synced.entries.some((entry) => JSON.parse(entry.details!).syncedBy === 'sso:oidc')).toBe(true);
  });

  it('OIDC_AUTO_REDIRECT makes the sign-in entry redirect to the provider, and the provider list names it', async () => {
    await start({ env: { OIDC_AUTO_REDIRECT: PROVIDER_ID } });
    const list = await new Client(app!.url).call('GET', '/api/auth/sso/providers');
    expect(list.body).toEqual({
      providers: [{ providerId: PROVIDER_ID, name: 'Corp SSO', type: 'oidc', startUrl: `/api/auth/sso/oidc/${PROVIDER_ID}/start` }],
      autoRedirect: PROVIDER_ID,
    });
    const browser = new Browser();
    const entry = await browser.request(`${app!.url}/api/auth/sso/entry`);
    expect(entry.status).toBe(302);
    expect(entry.location!.startsWith(`${idp!.issuer}/auth?`)).toBe(true);
    const last = await browser.follow(entry.location!, (next) => next.startsWith(app!.url) && !isCallback(next));
    expect(last.status, last.body).toBe(303);
    expect((await sessionOf(browser)).body.user.email).toBe(ALICE.email);
  });

  it('without OIDC_AUTO_REDIRECT the entry answers 404 naming the variable', async () => {
    await start();
    const entry = await new Browser().request(`${app!.url}/api/auth/sso/entry`);
    expect(entry.status).toBe(404);
    expect(entry.json.error).toMatch(/OIDC_AUTO_REDIRECT/);
    expect((await new Client(app!.url).call('GET', '/api/auth/sso/providers')).body.autoRedirect).toBeNull();
  });

  it('rejects a wrong state: one not bound to this browser, and one never issued', async () => {
    await start();
    const browser = new Browser();
    const atCallback = await browser.follow(startUrl(), isCallback);
    const callback = new URL(atCallback.location!);
    // Another browser (the attacker's victim) presenting this callback: its cookie holds no or another state.
    const other = new Browser();
    other.cookies.set('holdfast_sso_state', 'someone-elses-state');
    const foreign = await other.request(callback.href);
    expect(foreign.status).toBe(400);
    expect(foreign.json.error).toMatch(/state does not match the sign-in this browser started/);
    // Same browser, state changed in the URL and cookie alike: no such pending sign-in.
    callback.searchParams.set('state', 'never-issued-state');
    browser.cookies.set('holdfast_sso_state', 'never-issued-state');
    const unknown = await browser.request(callback.href);
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toMatch(/unknown, used or expired state/);
    expect(browser.cookies.has('holdfast_session')).toBe(false);
  });

  it('rejects a replayed callback (the state is single use)', async () => {
    await start();
    const browser = new Browser();
    const atCallback = await browser.follow(startUrl(), isCallback);
    const stateCookie = browser.cookies.get('holdfast_sso_state')!;
    expect((await browser.request(atCallback.location!)).status).toBe(303);
    browser.cookies.set('holdfast_sso_state', stateCookie);
    const replay = await browser.request(atCallback.location!);
    expect(replay.status).toBe(400);
    expect(replay.json.error).toMatch(/unknown, used or expired state/);
  });

  it('rejects an ID token whose nonce belongs to another sign-in', async () => {
    await start();
    const browser = new Browser();
    const first = new URL((await browser.request(startUrl())).location!);
    const second = new URL((await browser.request(startUrl())).location!);
    // The provider is asked with the first sign-in's state and PKCE challenge but the second one's nonce, so the
    // code exchange succeeds and only the nonce check can catch the mix-up.
    second.searchParams.set('state', first.searchParams.get('state')!);
    second.searchParams.set('code_challenge', first.searchParams.get('code_challenge')!);
    browser.cookies.set('holdfast_sso_state', first.searchParams.get('state')!);
    const last = await browser.follow(second.href, (next) => next.startsWith(app!.url) && !isCallback(next));
    expect(last.status).toBe(400);
    expect(last.json.error).toMatch(/OIDC sign-in failed: .*nonce/i);
    expect(browser.cookies.has('holdfast_session')).toBe(false);
  });

  it('rejects an expired authorization code', async () => {
    await start();
    idp!.codeTtlSeconds = 1;
    const browser = new Browser();
    const atCallback = await browser.follow(startUrl(), isCallback);
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const late = await browser.request(atCallback.location!);
    expect(late.status).toBe(400);
    expect(late.json.error).toMatch(/OIDC sign-in failed: the provider answered invalid_grant/);
  });

  it('rejects a response naming a foreign issuer', async () => {
    await start();
    const browser = new Browser();
    const atCallback = await browser.follow(startUrl(), isCallback);
    const callback = new URL(atCallback.location!);
    expect(callback.searchParams.get('iss')).toBe(idp!.issuer);
    callback.searchParams.set('iss', 'https://evil-idp.example.test');
    const forged = await browser.request(callback.href);
    expect(forged.status).toBe(400);
    expect(forged.json.error).toMatch(/OIDC sign-in failed: .*iss/i);
    expect(browser.cookies.has('holdfast_session')).toBe(false);
  });

  it('answers clearly when discovery fails, the issuer is plain http, or the discovery document names another issuer', async () => {
    const { admin } = await start();
    const add = async (providerId: string, extra: Record<string, unknown>) => {
      const created = await admin.call('POST', '/api/sso/providers', { json: { ...providerInput(extra), providerId } });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return new Browser().request(`${app!.url}/api/auth/sso/oidc/${providerId}/start`);
    };
    const unreachable = await add('down', { issuer: 'http://127.0.0.1:9/realms/none' });
    expect(unreachable.status).toBe(502);
    expect(unreachable.json.error).toMatch(/OIDC discovery failed for "down" at http:\/\/127\.0\.0\.1:9/);
    const plainHttp = await add('plain', { issuer: 'http://idp.example.test' });
    expect(plainHttp.status).toBe(400);
    expect(plainHttp.json.error).toMatch(/uses http:\/\/; use https:\/\/ or set OIDC_ALLOW_HTTP=true/);
    const mismatch = await add('mixed', { issuer: 'https://other-idp.example.test', discoveryEndpoint: `${idp!.issuer}/.well-known/openid-configuration` });
    expect(mismatch.status).toBe(502);
    expect(mismatch.json.error).toMatch(/announces issuer .* not the configured https:\/\/other-idp\.example\.test/);
    const unknown = await new Browser().request(`${app!.url}/api/auth/sso/oidc/nobody/start`);
    expect(unknown.status).toBe(404);
  });

  it('keeps the client secret encrypted and never returns it; an empty secret on update keeps it', async () => {
    const { admin, provider } = await start();
    expect(JSON.stringify(provider)).not.toContain(idp!.clientSecret);
    expect(provider.hasClientSecret).toBe(true);
    const listed = await admin.call('GET', '/api/sso/providers');
    expect(JSON.stringify(listed.body)).not.toContain(idp!.clientSecret);
    const kept = await admin.call('PUT', `/api/sso/providers/${provider.id}`, { json: { clientSecret: '', name: 'Renamed' } });
    expect(kept.status).toBe(200);
    expect(kept.body.name).toBe('Renamed');
    expect(kept.body.hasClientSecret).toBe(true);
    expect(await db!.dumpAllRows()).not.toContain(idp!.clientSecret);
    // Sign-in still works with the kept secret (the token endpoint authenticates the client with it).
    expect((await signInAsBrowser()).last.status).toBe(303);
    const audit = await admin.call('GET', '/api/audit');
    expect(JSON.stringify(audit.body)).not.toContain(idp!.clientSecret);
  });

  it('validates provider input: missing issuer, duplicate providerId, unknown mapped group; non-admins get 403', async () => {
    const { admin } = await start();
    const missing = await admin.call('POST', '/api/sso/providers', { json: { providerId: 'no-issuer', type: 'oidc', name: 'x', clientId: 'c' } });
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(/needs issuer/);
    const duplicate = await admin.call('POST', '/api/sso/providers', { json: { providerId: PROVIDER_ID, type: 'oidc', name: 'x', issuer: idp!.issuer, clientId: 'c' } });
    expect(duplicate.status).toBe(409);
    const badGroup = await admin.call('POST', '/api/sso/providers', {
      json: { providerId: 'grouped', type: 'oidc', name: 'x', issuer: idp!.issuer, clientId: 'c', groupClaim: 'groups', groupMappings: [{ claimValue: 'a', groupId: 'nope' }] },
    });
    expect(badGroup.status).toBe(400);
    expect(badGroup.body.error).toMatch(/unknown groups: nope/);
    await admin.call('POST', '/api/users', { json: { name: 'Bob', email: 'bob@example.test', password: 'bob password 123' } });
    const bob = new Client(app!.url);
    await bob.signIn('bob@example.test', 'bob password 123');
    expect((await bob.call('GET', '/api/sso/providers')).status).toBe(403);
  });

  it('keeps working with DISABLE_EMAIL_LOGIN while password sign-in is refused', async () => {
    await startServers({ DISABLE_EMAIL_LOGIN: 'true' });
    // Password setup is refused with email login off, so the provider is stored directly (an operator would use an
    // API key or the CLI).
    await new SsoProviderStore(() => db!.database.em() as EntityManager, () => sealer).create(providerInput());
    expect((await new Client(app!.url).call('POST', '/api/auth/sign-in', { json: { email: ALICE.email, password: 'whatever 123' } })).status).toBe(403);
    const { browser, last } = await signInAsBrowser();
    expect(last.status, last.body).toBe(303);
    expect((await sessionOf(browser)).body.user.email).toBe(ALICE.email);
  });
});
