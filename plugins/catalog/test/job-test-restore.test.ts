// Issue 19: a job's test restore target (`testRestore`) is stored, shown, validated and handed to the engine in
// the run plan; its schedule reaches the scheduler through `listJobs`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KNOWN_SECRETS } from './fixture-adapters.js';
import { populate } from './fixtures.js';
import { createSite, startCatalog, type CatalogServer, type Site } from './harness.js';

describe('job test restore target', () => {
  let site: Site;
  let server: CatalogServer;
  let ids: Awaited<ReturnType<typeof populate>>;
  beforeAll(async () => {
    site = await createSite('sqlite');
    server = await startCatalog(site);
    ids = await populate(server);
  });
  afterAll(async () => {
    await server?.close();
    await site?.remove();
  });

  it('is null by default, stored on update, shown by GET, in the run plan and its schedule in listJobs', async () => {
    expect((await server.call('GET', `/api/jobs/${ids.job.id}`)).json.testRestore).toBeNull();
    const testRestore = { target: { type: 'database', sourceId: ids.source.id }, schedule: '0 5 * * 0', rowCountTolerancePercent: 1 };
    const updated = await server.call('PUT', `/api/jobs/${ids.job.id}`, { testRestore });
    expect(updated.status).toBe(200);
    expect(updated.json.testRestore).toEqual(testRestore);
    expect((await server.call('GET', `/api/jobs/${ids.job.id}`)).json.testRestore).toEqual(testRestore);
    expect((await server.catalog.jobCatalog.resolveRunPlan(ids.job.id)).job.testRestore).toEqual(testRestore);
    expect((await server.catalog.jobCatalog.listJobs()).find((job) => job.id === ids.job.id)?.testRestoreSchedule).toBe('0 5 * * 0');

    const directory = { target: { type: 'directory', path: '/var/tmp/scratch' } };
    expect((await server.call('PUT', `/api/jobs/${ids.job.id}`, { testRestore: directory })).json.testRestore).toEqual(directory);
    expect((await server.catalog.jobCatalog.listJobs()).find((job) => job.id === ids.job.id)).not.toHaveProperty('testRestoreSchedule');
    expect((await server.call('PUT', `/api/jobs/${ids.job.id}`, { testRestore: null })).json.testRestore).toBeNull();
    expect((await server.catalog.jobCatalog.resolveRunPlan(ids.job.id)).job.testRestore).toBeNull();
  });

  it('travels in configuration exports (with its scratch server reference)', async () => {
    const testRestore = { target: { type: 'database', sourceId: ids.source.id }, schedule: '30 4 * * *' };
    expect((await server.call('PUT', `/api/jobs/${ids.job.id}`, { testRestore })).status).toBe(200);
    const exported = await server.call('GET', `/api/config/export?encryptionProfileId=${ids.vault.id}`);
    expect(exported.status).toBe(200);
    const otherSite = await createSite('sqlite');
    const other = await startCatalog(otherSite, { HOLDFAST_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('hex') });
    try {
      const imported = await other.call('POST', '/api/config/import', { document: exported.json, key: KNOWN_SECRETS.vaultKey });
      expect(imported.status, JSON.stringify(imported.json)).toBe(200);
      const sourceName = (await server.call('GET', `/api/adapters/${ids.source.id}`)).json.name;
      const newSource = (await other.call('GET', '/api/adapters?type=database')).json.find((a: { name: string }) => a.name === sourceName);
      const [job] = (await other.call('GET', '/api/jobs')).json;
      expect(job.testRestore).toEqual({ ...testRestore, target: { type: 'database', sourceId: newSource.id } });
    } finally {
      await other.close();
      await otherSite.remove();
    }
    await server.call('PUT', `/api/jobs/${ids.job.id}`, { testRestore: null });
  });

  it('takes Redis and SQLite scratch targets; a Redis target names a Redis source and an index', async () => {
    const put = (testRestore: unknown) => server.call('PUT', `/api/jobs/${ids.job.id}`, { testRestore });
    const redis = { target: { type: 'redis', database: 15 }, schedule: '0 6 * * *' };
    expect((await put(redis)).json.testRestore).toEqual(redis);
    expect((await server.catalog.jobCatalog.resolveRunPlan(ids.job.id)).job.testRestore).toEqual(redis);
    const sqlite = { target: { type: 'sqlite', path: '/var/tmp/scratch' }, rowCountTolerancePercent: 0 };
    expect((await put(sqlite)).json.testRestore).toEqual(sqlite);
    const notRedis = await put({ target: { type: 'redis', database: 3, sourceId: ids.source.id } });
    expect(notRedis.status).toBe(400);
    expect(JSON.stringify(notRedis.json)).toContain('body.testRestore.target.sourceId');
    expect(JSON.stringify(notRedis.json)).toContain('must be a Redis source configuration');
    expect((await put({ target: { type: 'redis', database: 1024 } })).status).toBe(400);
    expect((await put({ target: { type: 'sqlite', path: 'relative/scratch' } })).status).toBe(400);
    await put(null);
  });

  it('refuses bad targets with 4xx naming the field', async () => {
    const put = (testRestore: unknown) => server.call('PUT', `/api/jobs/${ids.job.id}`, { testRestore });
    const badCron = await put({ target: { type: 'database' }, schedule: 'every day' });
    expect(badCron.status).toBe(400);
    expect(JSON.stringify(badCron.json)).toContain('body.testRestore.schedule');
    const storage = await put({ target: { type: 'database', sourceId: ids.store.id } });
    expect(storage.status).toBe(400);
    expect(JSON.stringify(storage.json)).toContain('body.testRestore.target.sourceId');
    expect((await put({ target: { type: 'database', sourceId: 'missing' } })).status).toBe(404);
    expect((await put({ target: { type: 'directory', path: 'relative/path' } })).status).toBe(400);
    expect((await put({ target: { type: 'redis' } })).status).toBe(400);
  });
});
