import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KNOWN_SECRETS } from './fixture-adapters.js';
import { populate } from './fixtures.js';
import { createSite, startCatalog, type CatalogServer, type Site } from './harness.js';

describe.each(['sqlite', 'postgresql'] as const)('catalog records on %s', (dialect) => {
  let site: Site;
  let server: CatalogServer;
  beforeEach(async () => {
    site = await createSite(dialect);
    server = await startCatalog(site);
  });
  afterEach(async () => {
    await server.close();
    await site.remove();
  });

  it('seeds system records once, idempotently across restarts', async () => {
    const policies = await server.call('GET', '/api/retention-policies');
    expect(policies.json.map((p: { name: string }) => p.name)).toEqual(['GFS 7/4/12/2', 'Keep all', 'Keep last 14']);
    expect(policies.json.find((p: { name: string }) => p.name === 'GFS 7/4/12/2').config).toEqual({
      mode: 'gfs', daily: 7, weekly: 4, monthly: 12, yearly: 2,
    });
    const naming = await server.call('GET', '/api/naming-templates');
    expect(naming.json).toMatchObject([{ name: 'Default', pattern: '{job_name}_yyyy-MM-dd_HH-mm-ss', isDefault: true, isSystem: true }]);
    const presets = await server.call('GET', '/api/schedule-presets');
    expect(presets.json.map((p: { schedule: string }) => p.schedule).sort()).toEqual(['0 * * * *', '0 2 * * *', '0 3 * * 0', '0 4 1 * *']);
    await server.close();
    server = await startCatalog(site);
    expect((await server.call('GET', '/api/retention-policies')).json).toHaveLength(3);
    expect((await server.call('GET', '/api/schedule-presets')).json).toHaveLength(4);
  });

  it('creates a full job graph and resolves its run plan for the engine', async () => {
    const ids = await populate(server);
    const job = (await server.call('GET', `/api/jobs/${ids.job.id}`)).json;
    expect(job.effectiveSchedule).toBe('0 1 * * *');
    expect(job.destinations.map((d: { configId: string }) => d.configId)).toEqual([ids.store.id, ids.drive.id]);

    const plan = await server.catalog.jobCatalog.resolveRunPlan(ids.job.id);
    expect(plan.job).toMatchObject({ name: 'Nightly main', compression: 'GZIP', databases: ['app'], namingPattern: '{job_name}_yyyyMMdd' });
    expect(plan.source.config).toMatchObject({ host: 'reachable', password: KNOWN_SECRETS.dbPassword, port: 5432 });
    expect(plan.source.credentials.primary).toMatchObject({ type: 'USERNAME_PASSWORD', password: KNOWN_SECRETS.userPassword });
    expect(plan.destinations.map((d) => [d.adapterId, d.priority])).toEqual([['fake-store', 1], ['fake-drive', 2]]);
    expect(plan.destinations[0]!.retention).toEqual({ policyId: null, strategyId: 'gfs', config: { mode: 'keep-last', count: 3 } });
    expect(plan.destinations[1]!.retention).toEqual({ policyId: ids.policy.id, strategyId: 'gfs', config: { mode: 'gfs', daily: 10 } });
    expect(plan.destinations[1]!.credentials.primary).toMatchObject({ clientSecret: KNOWN_SECRETS.oauthSecret });
    expect(plan.encryption?.key.toString('hex')).toBe(KNOWN_SECRETS.vaultKey);
    expect(await server.catalog.jobCatalog.jobNames([ids.job.id, 'nope'])).toEqual(new Map([[ids.job.id, 'Nightly main']]));

    // The listing half of the port (scheduler, dashboard, storage statistics): effective schedules, storage configs.
    expect(await server.catalog.jobCatalog.listJobs()).toEqual([
      { id: ids.job.id, name: 'Nightly main', schedule: '0 1 * * *', scheduleFrom: 'preset', enabled: true },
    ]);
    const hourly = (await server.call('GET', '/api/schedule-presets')).json.find((p: { schedule: string }) => p.schedule === '0 * * * *');
    expect((await server.call('PUT', `/api/jobs/${ids.job.id}`, { schedulePresetId: hourly.id, enabled: false })).status).toBe(200);
    expect(await server.catalog.jobCatalog.listJobs()).toEqual([
      { id: ids.job.id, name: 'Nightly main', schedule: '0 * * * *', scheduleFrom: 'preset', enabled: false },
    ]);
    expect((await server.call('PUT', `/api/jobs/${ids.job.id}`, { schedulePresetId: null, schedule: '30 2 * * *' })).status).toBe(200);
    expect((await server.catalog.jobCatalog.listJobs())[0]).toMatchObject({ schedule: '30 2 * * *', scheduleFrom: 'job' });
    const storages = await server.catalog.jobCatalog.listStorageDestinations();
    expect(storages.map((d) => d.configId).sort()).toEqual([ids.store.id, ids.drive.id].sort());
    expect(storages.find((d) => d.configId === ids.store.id)?.adapterId).toBe('fake-store');
  });

  it('stores each destination\'s transfer (issue 48: relay by default, direct), answers it, clones it and hands it to the run plan', async () => {
    const ids = await populate(server);
    const job = (await server.call('GET', `/api/jobs/${ids.job.id}`)).json;
    expect(job.destinations.map((d: { transfer: string }) => d.transfer)).toEqual(['relay', 'relay']);
    const destinations = [
      { configId: ids.store.id, priority: 1, transfer: 'direct' },
      { configId: ids.drive.id, priority: 2 },
    ];
    const updated = await server.call('PUT', `/api/jobs/${ids.job.id}`, { destinations });
    expect(updated.status, JSON.stringify(updated.json)).toBe(200);
    expect(updated.json.destinations.map((d: { transfer: string }) => d.transfer)).toEqual(['direct', 'relay']);
    const plan = await server.catalog.jobCatalog.resolveRunPlan(ids.job.id);
    expect(plan.destinations.map((d) => d.transfer)).toEqual(['direct', 'relay']);
    const clone = await server.call('POST', `/api/jobs/${ids.job.id}/clone`, {});
    expect(clone.json.destinations.map((d: { transfer: string }) => d.transfer)).toEqual(['direct', 'relay']);
    const refused = await server.call('PUT', `/api/jobs/${ids.job.id}`, { destinations: [{ configId: ids.store.id, transfer: 'both' }] });
    expect(refused.status).toBe(400);
    expect(refused.json.issues[0].path).toBe('body.destinations[0].transfer');
    expect((await server.call('GET', `/api/jobs/${ids.job.id}`)).json.destinations.map((d: { transfer: string }) => d.transfer)).toEqual(['direct', 'relay']);
  });

  it('falls back to the default naming template when a job names none', async () => {
    const ids = await populate(server);
    await server.call('PUT', `/api/jobs/${ids.job.id}`, { namingTemplateId: null });
    expect((await server.catalog.jobCatalog.resolveRunPlan(ids.job.id)).job.namingPattern).toBe('{job_name}_yyyy-MM-dd_HH-mm-ss');
    const other = await server.call('POST', '/api/naming-templates', { name: 'Mine', pattern: '{job_name}_yyyy', isDefault: true });
    expect(other.status).toBe(201);
    expect((await server.catalog.jobCatalog.resolveRunPlan(ids.job.id)).job.namingPattern).toBe('{job_name}_yyyy');
    const all = (await server.call('GET', '/api/naming-templates')).json as Array<{ name: string; isDefault: boolean }>;
    expect(all.filter((t) => t.isDefault).map((t) => t.name)).toEqual(['Mine']);
  });

  it('refuses deletes of records that jobs use with 409 naming the jobs', async () => {
    const ids = await populate(server);
    const targets = [
      `/api/adapters/${ids.source.id}`,
      `/api/adapters/${ids.store.id}`,
      `/api/vault/${ids.vault.id}`,
      `/api/retention-policies/${ids.policy.id}`,
      `/api/naming-templates/${ids.naming.id}`,
      `/api/schedule-presets/${ids.preset.id}`,
      `/api/notification-templates/${ids.template.id}`,
      `/api/credentials/${ids.oauth.id}`,
    ];
    for (const path of targets) {
      const reply = await server.call('DELETE', path);
      expect(reply.status, path).toBe(409);
      expect(reply.json.error).toContain('Nightly main');
      expect(reply.json.details.jobs).toEqual([{ id: ids.job.id, name: 'Nightly main' }]);
    }
    expect((await server.call('DELETE', `/api/jobs/${ids.job.id}`)).status).toBe(200);
    expect((await server.call('DELETE', `/api/vault/${ids.vault.id}`)).status).toBe(200);
    expect((await server.call('GET', `/api/jobs/${ids.job.id}`)).status).toBe(404);
  });

  it('answers 409 for taken names and for changes to system records', async () => {
    await populate(server);
    expect((await server.call('POST', '/api/schedule-presets', { name: 'Nightly 1am', schedule: '0 3 * * *' })).status).toBe(409);
    expect((await server.call('POST', '/api/vault', { name: 'Offsite key' })).status).toBe(409);
    const keepAll = (await server.call('GET', '/api/retention-policies')).json.find((p: { name: string }) => p.name === 'Keep all');
    const edit = await server.call('PUT', `/api/retention-policies/${keepAll.id}`, { name: 'Renamed' });
    expect(edit.status).toBe(409);
    expect(edit.json.error).toMatch(/system record/);
    expect((await server.call('DELETE', `/api/retention-policies/${keepAll.id}`)).status).toBe(409);
    const makeDefault = await server.call('PUT', `/api/retention-policies/${keepAll.id}`, { isDefault: true });
    expect(makeDefault.status).toBe(200);
    expect(makeDefault.json.isDefault).toBe(true);
  });

  it('rejects retention tiers that are negative, fractional or not numbers, and 6-part cron', async () => {
    for (const config of [{ mode: 'gfs', daily: -1 }, { mode: 'gfs', weekly: 1.5 }, { mode: 'gfs', monthly: '3' }, { mode: 'nope' }]) {
      const reply = await server.call('POST', '/api/retention-policies', { name: 'Bad', config });
      expect(reply.status, JSON.stringify(config)).toBe(400);
      expect(reply.json.error).toMatch(/config/);
    }
    const sixPart = await server.call('POST', '/api/schedule-presets', { name: 'Secs', schedule: '0 0 1 * * *' });
    expect(sixPart.status).toBe(400);
    expect(sixPart.json.error).toMatch(/5 space-separated fields/);
    const outOfRange = await server.call('POST', '/api/schedule-presets', { name: 'Bad', schedule: '61 * * * *' });
    expect(outOfRange.status).toBe(400);
    const badPattern = await server.call('POST', '/api/naming-templates', { name: 'Bad', pattern: '../{job_name}' });
    expect(badPattern.status).toBe(400);
  });

  it('clones a job disabled under a free name', async () => {
    const ids = await populate(server);
    const first = await server.call('POST', `/api/jobs/${ids.job.id}/clone`);
    expect(first.status).toBe(201);
    expect(first.json).toMatchObject({ name: 'Nightly main (copy)', enabled: false, sourceId: ids.source.id });
    expect(first.json.destinations).toHaveLength(2);
    const second = await server.call('POST', `/api/jobs/${ids.job.id}/clone`);
    expect(second.json.name).toBe('Nightly main (copy 2)');
  });
});
