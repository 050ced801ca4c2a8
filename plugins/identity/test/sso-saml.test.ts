// SAML single sign-on end to end against a local IdP that signs real assertions (xml-crypto, RSA-SHA256): the
// browser follows Holdfast's redirect to the IdP, the IdP answers the AuthnRequest, the browser posts the signed
// response to the ACS as a form, exactly like the HTTP-POST binding.
import { afterEach, describe, expect, it } from 'vitest';
import { AccountEntity } from '../src/entities/account.js';
import { UserEntity } from '../src/entities/user.js';
import { Browser } from './support/browser.js';
import { DIALECTS, openDatabase, type TestDatabase } from './support/database.js';
import { Client, setUpAdmin, startIdentityApp, type RunningIdentityApp } from './support/http.js';
import { generateSigningKey, readAuthnRequest, TestSamlIdp, type ResponseOptions } from './support/saml-idp.js';

const idp = new TestSamlIdp();
const PROVIDER_ID = 'corp-saml';
const SP_ENTITY_ID = 'https://holdfast.example.test/saml';
const BOB = { nameId: 'bob-persistent-7', email: 'bob@corp.example.test', name: 'Bob Saml' };

let db: TestDatabase | undefined;
let app: RunningIdentityApp | undefined;
afterEach(async () => {
  await app?.close();
  await db?.close();
  app = db = undefined;
});

describe.each(DIALECTS)('SAML single sign-on against a signing IdP on %s', (dialect) => {
  async function start(provider: Record<string, unknown> = {}) {
    db = await openDatabase(dialect);
    app = await startIdentityApp(db);
    const admin = await setUpAdmin(app);
    const created = await admin.call('POST', '/api/sso/providers', {
      json: { providerId: PROVIDER_ID, type: 'saml', name: 'Corp SAML', clientId: SP_ENTITY_ID, issuer: idp.entityId, samlEntryPoint: idp.ssoUrl, samlCertificate: idp.key.certificate, ...provider },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    return admin;
  }

  /** Starts at Holdfast, lets the IdP read the AuthnRequest, and posts the IdP's response to the ACS. */
  async function signIn(overrides: Partial<ResponseOptions> = {}, browser = new Browser()) {
    const started = await browser.request(`${app!.url}/api/auth/sso/saml/${PROVIDER_ID}/start?redirectTo=%2Fhistory`);
    expect(started.status).toBe(302);
    expect(started.location!.startsWith(idp.ssoUrl)).toBe(true);
    const request = readAuthnRequest(started.location!);
    const SAMLResponse = idp.response({
      inResponseTo: request.id,
      acsUrl: request.acsUrl,
      audience: request.spEntityId,
      nameId: BOB.nameId,
      attributes: { email: BOB.email, displayName: BOB.name, memberOf: ['backup-admins', 'everyone'] },
      ...overrides,
    });
    const posted = await browser.request(request.acsUrl, { form: { SAMLResponse, RelayState: request.relayState ?? '' } });
    return { browser, posted, request };
  }

  it('serves SP metadata with the entity id and the ACS URL', async () => {
    await start();
    const metadata = await fetch(`${app!.url}/api/auth/sso/saml/${PROVIDER_ID}/metadata`);
    expect(metadata.status).toBe(200);
    expect(metadata.headers.get('content-type')).toMatch(/application\/samlmetadata\+xml/);
    const xml = await metadata.text();
    expect(xml).toContain(`entityID="${SP_ENTITY_ID}"`);
    expect(xml).toContain(`Location="${app!.url}/api/auth/sso/saml/${PROVIDER_ID}/acs"`);
    expect((await fetch(`${app!.url}/api/auth/sso/saml/nope/metadata`)).status).toBe(404);
  });

  it('accepts a valid signed assertion: provisions, maps attributes and groups, signs in, audits and emits events', async () => {
    const admin = await start();
    const group = (await admin.call('POST', '/api/groups', { json: { name: 'Backup admins', permissions: ['jobs:read', 'jobs:write'] } })).body;
    const providers = await admin.call('GET', '/api/sso/providers');
    await admin.call('PUT', `/api/sso/providers/${providers.body.providers[0].id}`, { json: { groupClaim: 'memberOf', groupMappings: [{ claimValue: 'backup-admins', groupId: group.id }] } });
    const seen: string[] = [];
    app!.events.on('user_created', (e) => void seen.push(`created:${e.email}`));
    app!.events.on('user_login', (e) => void seen.push(`login:${e.email}`));

    const { browser, posted, request } = await signIn();
    expect(request.acsUrl).toBe(`${app!.url}/api/auth/sso/saml/${PROVIDER_ID}/acs`);
    expect(posted.status, posted.body).toBe(303);
    expect(posted.location).toBe(`${app!.url}/history`);
    const client = new Client(app!.url);
    client.cookie = `holdfast_session=${browser.cookies.get('holdfast_session')}`;
    const session = await client.call('GET', '/api/auth/session');
    expect(session.body.user).toMatchObject({ email: BOB.email, name: BOB.name, groupId: group.id });
    expect(session.body.permissions).toEqual(['jobs:read', 'jobs:write']);
    expect(seen).toEqual([`created:${BOB.email}`, `login:${BOB.email}`]);
    const em = db!.database.em();
    const user = await em.findOneOrFail(UserEntity, { email: BOB.email });
    expect(await em.count(AccountEntity, { userId: user.id, providerId: `sso:${PROVIDER_ID}`, accountId: BOB.nameId })).toBe(1);
    const login = (await app!.services.audit.list({ page: 1, pageSize: 20, action: 'LOGIN', userId: user.id })).entries[0]!;
    expect(JSON.parse(login.details!)).toMatchObject({ authMethod: 'sso:saml', providerId: PROVIDER_ID });
  });

  it('rejects the same response twice (InResponseTo is single use)', async () => {
    await start();
    const { browser, posted, request } = await signIn();
    expect(posted.status).toBe(303);
    const again = idp.response({ inResponseTo: request.id, acsUrl: request.acsUrl, audience: request.spEntityId, nameId: BOB.nameId, attributes: { email: BOB.email } });
    const replay = await browser.request(request.acsUrl, { form: { SAMLResponse: again } });
    expect(replay.status).toBe(400);
    expect(replay.json.error).toMatch(/SAML sign-in failed: InResponseTo is not valid/);
  });

  it('rejects an unsolicited response (InResponseTo never issued)', async () => {
    await start();
    const acsUrl = `${app!.url}/api/auth/sso/saml/${PROVIDER_ID}/acs`;
    const forged = idp.response({ inResponseTo: '_never_requested', acsUrl, audience: SP_ENTITY_ID, nameId: BOB.nameId, attributes: { email: BOB.email } });
    const answer = await new Browser().request(acsUrl, { form: { SAMLResponse: forged } });
    expect(answer.status).toBe(400);
    expect(answer.json.error).toMatch(/InResponseTo is not valid/);
  });

  it('rejects an expired assertion', async () => {
    await start();
    const { browser, posted } = await signIn({ offsetMs: -60 * 60_000 });
    expect(posted.status).toBe(400);
    expect(posted.json.error).toMatch(/SAML sign-in failed: .*(expired|NotOnOrAfter)/i);
    expect(browser.cookies.has('holdfast_session')).toBe(false);
  });

  it('rejects an assertion for another audience', async () => {
    await start();
    const { posted } = await signIn({ audience: 'https://other-sp.example.test' });
    expect(posted.status).toBe(400);
    expect(posted.json.error).toMatch(/SAML sign-in failed: .*audience/i);
  });

  it('rejects a bad signature: content changed after signing, and a signature by another key', async () => {
    await start();
    const tampered = await signIn({ tamper: (xml) => xml.replace(BOB.email, 'mallory@corp.example.test') });
    expect(tampered.posted.status).toBe(400);
    expect(tampered.posted.json.error).toMatch(/SAML sign-in failed: Invalid signature/);
    const otherKey = await signIn({ signWith: generateSigningKey('attacker') });
    expect(otherKey.posted.status).toBe(400);
    expect(otherKey.posted.json.error).toMatch(/SAML sign-in failed: Invalid signature/);
    expect(await db!.database.em().count(UserEntity, { email: { $in: [BOB.email, 'mallory@corp.example.test'] } })).toBe(0);
  });

  it('rejects an unsigned assertion', async () => {
    await start();
    const { posted } = await signIn({ unsigned: true });
    expect(posted.status).toBe(400);
    expect(posted.json.error).toMatch(/SAML sign-in failed: Invalid signature/);
  });

  it('applies the provisioning rule: off refuses an unknown email clearly', async () => {
    await start({ allowProvisioning: false });
    const { posted } = await signIn();
    expect(posted.status).toBe(403);
    expect(posted.json.error).toMatch(/No Holdfast account exists for bob@corp\.example\.test.*allowProvisioning is off/);
  });

  it('answers 503 naming the system key when no sealer is registered (a server without the catalog plugin)', async () => {
    db = await openDatabase(dialect);
    app = await startIdentityApp(db, { withoutSealer: true });
    const admin = await setUpAdmin(app);
    const refused = await admin.call('POST', '/api/sso/providers', {
      json: { providerId: PROVIDER_ID, type: 'saml', name: 'Corp SAML', samlEntryPoint: idp.ssoUrl, samlCertificate: idp.key.certificate },
    });
    expect(refused.status).toBe(503);
    expect(refused.body.error).toMatch(/system encryption key is not available/);
  });

  it('answers a malformed form with 400 and a JSON body with 415', async () => {
    await start();
    const acsUrl = `${app!.url}/api/auth/sso/saml/${PROVIDER_ID}/acs`;
    expect((await new Browser().request(acsUrl, { form: { SAMLResponse: 'bm90IHhtbA==' } })).status).toBe(400);
    const missing = await new Browser().request(acsUrl, { form: { RelayState: '/' } });
    expect(missing.status).toBe(400);
    expect(missing.json.error).toMatch(/SAMLResponse/);
    const json = await fetch(acsUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"SAMLResponse":"x"}' });
    expect(json.status).toBe(415);
  });
});
