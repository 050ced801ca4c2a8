// Write-back of renewed OAuth tokens (AdapterContext.updateCredentials): a cloud-drive adapter that refreshed its
// access token hands the new token to the host, which must store it encrypted in the assigned credential profile.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineStorageAdapter, inject, injectable, z, type AdapterContext, type HealthResult } from '@holdfast/sdk';
// The host's tokens (the registry): the SDK's TOKENS holds only what an adapter injects.
import { TOKENS, type AdapterRegistry } from '@holdfast/kernel';
import { createSite, startCatalog, type CatalogServer, type Site } from './harness.js';

const RENEWED = 'renewed-access-token-5c1e9a';
const ROTATED = 'rotated-refresh-token-77b0d2';
const EXPIRES = '2030-01-01T00:00:00.000Z';

/** A storage adapter whose check() "refreshes" its token and writes it back, as the cloud-drive adapters do. */
@injectable()
class TokenProbe {
  constructor(@inject(TOKENS.AdapterContext) private readonly context: AdapterContext) {}
  async check(): Promise<HealthResult> {
    if (!this.context.updateCredentials) return { ok: false, message: 'no updateCredentials in the context' };
    await this.context.updateCredentials('primary', { accessToken: RENEWED, refreshToken: ROTATED, tokenExpiresAt: EXPIRES });
    return { ok: true, message: 'token written back' };
  }
}

const tokenProbe = defineStorageAdapter({
  id: 'token-probe',
  displayName: 'Token write-back probe',
  configSchema: z.strictObject({}),
  capabilities: { rangeReads: false, serverChecksum: false, parallelMetadataReads: true, symlinks: false, maxParallelParts: 1 },
  requiredCredentials: ['OAUTH'],
  implementation: TokenProbe as never,
});

describe('credential write-back of renewed OAuth tokens (sqlite)', () => {
  let site: Site;
  let server: CatalogServer;
  let credentialId: string;
  beforeAll(async () => {
    site = await createSite('sqlite');
    server = await startCatalog(site);
    server.container.resolve<AdapterRegistry>(TOKENS.AdapterRegistry).register(tokenProbe, { packageName: 'test-token-probe', version: '0.1.0' });
  });
  afterAll(async () => {
    await server?.close();
    await site?.remove();
  });

  async function freshProfile(): Promise<string> {
    const created = await server.call('POST', '/api/credentials', {
      name: `Drive OAuth ${Math.random()}`,
      type: 'OAUTH',
      data: { clientId: 'client-1', clientSecret: 'client-secret-1', refreshToken: 'old-refresh', accessToken: 'old-access' },
    });
    expect(created.status).toBe(201);
    return created.json.id as string;
  }

  async function stored(id: string): Promise<{ data: Record<string, unknown>; raw: string }> {
    const revealed = await server.call('POST', `/api/credentials/${id}/reveal`);
    expect(revealed.status).toBe(200);
    const [row] = await server.db.em().getKnex()('credential_profiles').select('data').where({ id });
    return { data: revealed.json.data, raw: String((row as { data: string }).data) };
  }

  it('a connection test stores the token the adapter renewed, encrypted, keeping the app credentials', async () => {
    credentialId = await freshProfile();
    const result = await server.call('POST', '/api/adapters/test-connection', { type: 'storage', adapterId: 'token-probe', config: {}, primaryCredentialId: credentialId });
    expect(result.json).toMatchObject({ success: true, message: 'token written back' });
    const { data, raw } = await stored(credentialId);
    expect(data).toEqual({ clientId: 'client-1', clientSecret: 'client-secret-1', refreshToken: ROTATED, accessToken: RENEWED, tokenExpiresAt: EXPIRES });
    for (const plain of [RENEWED, ROTATED, 'client-secret-1']) expect(raw).not.toContain(plain);
  });

  it('a saved destination resolved for a run carries updateCredentials that writes into its profile', async () => {
    const id = await freshProfile();
    const saved = await server.call('POST', '/api/adapters', { name: 'Probe', type: 'storage', adapterId: 'token-probe', config: {}, primaryCredentialId: id });
    expect(saved.status).toBe(201);
    const resolved = await server.catalog.jobCatalog.resolveAdapterConfig(saved.json.id);
    expect(typeof resolved.updateCredentials).toBe('function');
    await resolved.updateCredentials!('primary', { accessToken: 'run-token-1', tokenExpiresAt: EXPIRES });
    expect((await stored(id)).data).toMatchObject({ accessToken: 'run-token-1', refreshToken: 'old-refresh', clientSecret: 'client-secret-1' });
    expect((await server.catalog.jobCatalog.resolveAdapterConfig(saved.json.id)).credentials.primary).toMatchObject({ accessToken: 'run-token-1' });
  });

  it('refuses to let an adapter change the app credentials, or a role without a profile', async () => {
    const id = await freshProfile();
    const saved = await server.call('POST', '/api/adapters', { name: 'Probe 2', type: 'storage', adapterId: 'token-probe', config: {}, primaryCredentialId: id });
    const resolved = await server.catalog.jobCatalog.resolveAdapterConfig(saved.json.id);
    await expect(resolved.updateCredentials!('primary', { clientSecret: 'evil' })).rejects.toThrow(/may not change clientSecret/);
    await expect(resolved.updateCredentials!('ssh', { accessToken: 'x' })).rejects.toThrow(/no credential profile is assigned as "ssh"/);
    expect((await stored(id)).data).toMatchObject({ clientSecret: 'client-secret-1', accessToken: 'old-access' });
  });
});
