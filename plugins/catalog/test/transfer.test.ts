import { generateAgeIdentity } from '@holdfast/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { KNOWN_SECRETS } from './fixture-adapters.js';
import { populate } from './fixtures.js';
import { createSite, startCatalog, type CatalogServer, type JsonValue, type Site } from './harness.js';

/** The catalog as the API shows it, with ids replaced by names so two installations compare field by field. */
async function comparable(server: CatalogServer) {
  const get = async (path: string) => (await server.call('GET', path)).json as Array<Record<string, JsonValue>>;
  const adapters = await get('/api/adapters');
  const credentials = await get('/api/credentials');
  const vault = await get('/api/vault');
  const policies = await get('/api/retention-policies');
  const naming = await get('/api/naming-templates');
  const presets = await get('/api/schedule-presets');
  const templates = await get('/api/notification-templates');
  const jobs = await get('/api/jobs');
  const nameOf = (list: Array<Record<string, JsonValue>>, id: string | null) => (id ? (list.find((r) => r.id === id)?.name ?? `missing:${id}`) : null);
  const strip = ({ id: _id, createdAt: _c, updatedAt: _u, lastHealthCheck: _h, ...rest }: Record<string, JsonValue>) => rest;
  const resolved: Record<string, unknown> = {};
  for (const adapter of adapters) resolved[adapter.name] = (await server.catalog.jobCatalog.resolveAdapterConfig(adapter.id)).config;
  return {
    adapters: adapters.map((a) => ({
      ...strip(a),
      primaryCredentialId: nameOf(credentials, a.primaryCredentialId),
      sshCredentialId: nameOf(credentials, a.sshCredentialId),
      defaultRetentionPolicyId: nameOf(policies, a.defaultRetentionPolicyId),
    })),
    resolved,
    credentials: credentials.map(strip),
    vault: vault.map(strip),
    policies: policies.map(strip),
    naming: naming.map(strip),
    presets: presets.map(strip),
    templates: templates.map((t) => ({ ...strip(t), bindings: t.bindings.map((b: JsonValue) => ({ ...b, channelId: nameOf(adapters, b.channelId) })) })),
    jobs: jobs.map((j) => ({
      ...strip(j),
      sourceId: nameOf(adapters, j.sourceId),
      encryptionProfileId: nameOf(vault, j.encryptionProfileId),
      namingTemplateId: nameOf(naming, j.namingTemplateId),
      schedulePresetId: nameOf(presets, j.schedulePresetId),
      notificationTemplateId: nameOf(templates, j.notificationTemplateId),
      destinations: j.destinations.map(({ id: _id, ...d }: JsonValue) => ({ ...d, configId: nameOf(adapters, d.configId), retentionPolicyId: nameOf(policies, d.retentionPolicyId) })),
    })),
    settings: (await server.call('GET', '/api/settings')).json,
    tasks: await server.systemTasks.list(),
  };
}

describe.each(['sqlite', 'postgresql'] as const)('export and import on %s', (dialect) => {
  const sites: Site[] = [];
  const servers: CatalogServer[] = [];
  afterEach(async () => {
    for (const server of servers.splice(0)) await server.close();
    for (const site of sites.splice(0)) await site.remove();
  });
  async function fresh(): Promise<CatalogServer> {
    const site = await createSite(dialect);
    sites.push(site);
    // A different system key per installation: secrets must be re-sealed on import.
    const key = Buffer.alloc(32, sites.length).toString('hex');
    const server = await startCatalog(site, { HOLDFAST_ENCRYPTION_KEY: key });
    servers.push(server);
    return server;
  }

  it('reproduces the catalog in a fresh installation from an encrypted export', async () => {
    const source = await fresh();
    const ids = await populate(source);
    await source.call('PUT', '/api/settings', {
      maxConcurrentJobs: 2,
      'notifications.config': { globalChannels: [ids.hook.id], events: { system_error: { enabled: true, channels: null, notifyUser: 'none' } } },
    });
    await source.systemTasks.restore([{ task: 'CLEAN_OLD_LOGS', schedule: '15 2 * * *', enabled: false }]);
    const exported = await source.call('GET', `/api/config/export?encryptionProfileId=${ids.vault.id}`);
    expect(exported.status).toBe(200);
    expect(exported.json.secrets).toBe('encrypted');
    for (const value of Object.values(KNOWN_SECRETS)) expect(exported.text).not.toContain(value);

    const target = await fresh();
    const wrongKey = await target.call('POST', '/api/config/import', { document: exported.json, key: 'ab'.repeat(32) });
    expect(wrongKey.status).toBe(400);
    expect(wrongKey.json.error).toMatch(/Offsite key/);
    const dry = await target.call('POST', '/api/config/import', { document: exported.json, key: KNOWN_SECRETS.vaultKey, dryRun: true });
    expect(dry.status).toBe(200);
    expect(dry.json.created).toMatchObject({ jobs: 1, adapters: 4, credentials: 2 });
    expect((await target.call('GET', '/api/jobs')).json).toEqual([]);
    const keyFile = `# Holdfast encryption key\n# Encryption profile: Offsite key\n${KNOWN_SECRETS.vaultKey}\n`;
    const imported = await target.call('POST', '/api/config/import', { document: exported.json, key: keyFile });
    expect(imported.status).toBe(200);
    expect(imported.json.conflicts).toEqual([]);

    const [before, after] = [await comparable(source), await comparable(target)];
    expect(after.adapters).toEqual(before.adapters.map((a) => ({ ...a, lastStatus: 'ONLINE', lastError: null, consecutiveFailures: 0 })));
    for (const key of ['resolved', 'credentials', 'vault', 'policies', 'naming', 'presets', 'templates', 'jobs', 'tasks'] as const) {
      expect(after[key], key).toEqual(before[key]);
    }
    expect(after.settings.maxConcurrentJobs).toBe(2);
    const newHook = (await target.call('GET', '/api/adapters?type=notification')).json[0].id;
    expect(after.settings['notifications.config'].globalChannels).toEqual([newHook]);
    const plan = await target.catalog.jobCatalog.resolveRunPlan((await target.call('GET', '/api/jobs')).json[0].id);
    expect(plan.encryption?.key.toString('hex')).toBe(KNOWN_SECRETS.vaultKey);

    const again = await target.call('POST', '/api/config/import', { document: exported.json, key: KNOWN_SECRETS.vaultKey });
    expect(again.status).toBe(409);
    expect(again.json.details.conflicts).toContainEqual({ kind: 'jobs', name: 'Nightly main' });
    const merged = await target.call('POST', '/api/config/import', { document: exported.json, key: KNOWN_SECRETS.vaultKey, mode: 'merge' });
    expect(merged.status).toBe(200);
    expect(merged.json.created).toEqual({});
    expect((await target.call('GET', '/api/jobs')).json).toHaveLength(1);
  });

  it('carries a public-key profile (issue 45) across: its recipient, and still no key', async () => {
    const source = await fresh();
    const { recipient } = generateAgeIdentity();
    const symmetric = await source.call('POST', '/api/vault', { name: 'Export key', key: KNOWN_SECRETS.vaultKey });
    expect(symmetric.status).toBe(201);
    const publicOnly = await source.call('POST', '/api/vault', { name: 'Owner public key', publicKey: recipient });
    expect(publicOnly.status, publicOnly.text).toBe(201);
    const exported = await source.call('GET', `/api/config/export?encryptionProfileId=${symmetric.json.id}`);
    expect(exported.status).toBe(200);
    const target = await fresh();
    const imported = await target.call('POST', '/api/config/import', { document: exported.json, key: KNOWN_SECRETS.vaultKey });
    expect(imported.status, imported.text).toBe(200);
    const profiles = (await target.call('GET', '/api/vault')).json as Array<Record<string, JsonValue>>;
    const carried = profiles.find((profile) => profile.name === 'Owner public key');
    expect(carried).toMatchObject({ kind: 'public-key', publicKey: recipient, keyFingerprint: publicOnly.json.keyFingerprint });
    await expect(target.catalog.jobCatalog.encryptionKey(carried!.id as string)).rejects.toThrow(/only a public key/);
    // Nothing about it is secret: an export without secrets carries it too.
    const plain = await source.call('GET', '/api/config/export');
    expect(plain.json.secrets).not.toBe('encrypted');
    const third = await fresh();
    const fromPlain = await third.call('POST', '/api/config/import', { document: plain.json });
    expect(fromPlain.status, fromPlain.text).toBe(200);
    expect(((await third.call('GET', '/api/vault')).json as Array<Record<string, JsonValue>>).map((profile) => [profile.name, profile.kind])).toEqual([['Owner public key', 'public-key']]);
  });

  it('omits secrets from an unencrypted export and says so', async () => {
    const source = await fresh();
    await populate(source);
    const exported = await source.call('GET', '/api/config/export');
    expect(exported.json).toMatchObject({ secrets: 'omitted', encryption: null, sealedSecrets: null });
    for (const value of Object.values(KNOWN_SECRETS)) expect(exported.text).not.toContain(value);
    const target = await fresh();
    const imported = await target.call('POST', '/api/config/import', { document: exported.json });
    expect(imported.status).toBe(200);
    expect(imported.json.warnings.join(' ')).toMatch(/no secrets/);
    expect(imported.json.warnings.join(' ')).toMatch(/Nightly main/);
    const store = (await target.call('GET', '/api/adapters?type=storage')).json.find((a: { name: string }) => a.name === 'Bucket');
    expect(store.secretStatus).toEqual({ secretAccessKey: false, sessionToken: false });
  });
});
