// Issue 17 acceptance 5 (secret-leak scan) for single sign-on through the assembled server: the OIDC client secret
// is sealed with the real system key (the catalog's SecretBox behind TOKENS.SecretSealer), and no response of any
// readable route, of the provider routes, of the public SSO routes or of the audit log carries it or its sealed text.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseKeyText, SecretBox, SYSTEM_KEY_FILE } from '@holdfast/catalog';
import { TOKENS } from '@holdfast/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, startFullServer, type Answer, type Caller, type FullServer } from './support/full-server.js';

const CLIENT_SECRET = 'LEAK-oidc-client-secret-6d1f';
const NEW_SECRET = 'LEAK-oidc-client-secret-rotated-0b3e';

describe.each(['sqlite', 'postgresql'] as const)('SSO client secrets never leave the server on %s', (dialect) => {
  let server: FullServer;
  let admin: Caller;

  beforeAll(async () => {
    server = await startFullServer(dialect);
    admin = await server.signIn(ADMIN.email, ADMIN.password);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  it('seals the client secret with the system key and answers neither it nor the sealed value anywhere', async () => {
    const created = await server.call('POST', '/api/sso/providers', admin, {
      providerId: 'keycloak',
      type: 'oidc',
      name: 'Keycloak',
      issuer: 'https://keycloak.example.test/realms/holdfast',
      clientId: 'holdfast',
      clientSecret: CLIENT_SECRET,
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.hasClientSecret).toBe(true);
    const saml = await server.call('POST', '/api/sso/providers', admin, {
      providerId: 'authentik-saml',
      type: 'saml',
      name: 'Authentik',
      samlEntryPoint: 'https://authentik.example.test/application/saml/holdfast/sso/binding/redirect/',
      samlCertificate: 'MIIBfake',
    });
    expect(saml.status, JSON.stringify(saml.body)).toBe(201);

    const knex = (server.handle.container.resolve(TOKENS.Database).em() as { getKnex(): (table: string) => { select(): Promise<Array<Record<string, string>>> } }).getKnex();
    const row = (await knex('sso_providers').select()).find((r) => r.provider_id === 'keycloak')!;
    const box = new SecretBox(parseKeyText(readFileSync(join(server.dataDir, SYSTEM_KEY_FILE), 'utf8'), 'key'));
    expect(SecretBox.isSealed(row.client_secret)).toBe(true);
    expect(box.open(row.client_secret!)).toBe(CLIENT_SECRET);
    // SPEC "Other records": the client id is stored encrypted too (and shown to administrators, unlike the secret).
    expect(SecretBox.isSealed(row.client_id)).toBe(true);
    expect(box.open(row.client_id!)).toBe('holdfast');
    expect(created.body.clientId).toBe('holdfast');

    // An empty secret on update keeps the stored one; a new one replaces it.
    const kept = await server.call('PUT', `/api/sso/providers/${created.body.id}`, admin, { clientSecret: '', name: 'Keycloak (corp)' });
    expect(kept.status, JSON.stringify(kept.body)).toBe(200);
    const keptRow = (await knex('sso_providers').select()).find((r) => r.provider_id === 'keycloak')!;
    expect(box.open(keptRow.client_secret!)).toBe(CLIENT_SECRET);
    const rotated = await server.call('PUT', `/api/sso/providers/${created.body.id}`, admin, { clientSecret: NEW_SECRET });
    expect(rotated.status).toBe(200);
    const rotatedRow = (await knex('sso_providers').select()).find((r) => r.provider_id === 'keycloak')!;
    expect(box.open(rotatedRow.client_secret!)).toBe(NEW_SECRET);

    const seen: Answer[] = [created, saml, kept, rotated];
    seen.push(await server.call('GET', `/api/sso/providers/${created.body.id}`, admin));
    seen.push(await server.call('GET', `/api/auth/sso/saml/authentik-saml/metadata`, {}));
    const document = (await server.call('GET', '/api/openapi.json', admin)).body as { paths: Record<string, Record<string, unknown>> };
    const readable = Object.entries(document.paths).filter(([path, methods]) => methods.get && !path.includes('{')).map(([path]) => path);
    expect(readable).toContain('/api/sso/providers');
    expect(readable).toContain('/api/auth/sso/providers');
    for (const path of readable) {
      if (/events|download|stream|entry/.test(path)) continue;
      seen.push(await server.call('GET', path, admin));
    }
    const forbidden = [CLIENT_SECRET, NEW_SECRET, row.client_secret!, rotatedRow.client_secret!];
    const leaks = seen.flatMap((answer, index) => {
      const text = `${typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body)} ${JSON.stringify([...answer.headers])}`;
      return forbidden.filter((value) => text.includes(value)).map(() => `answer ${index}`);
    });
    expect(leaks).toEqual([]);
  }, 120_000);
});
