// SPEC "DbVersionHistory" and `db_version_changed` (issue 13 acceptance 5, with the labelled fake engine
// `fake-versioned-db` whose version comes from its config): the first detection adds a row and raises nothing, an
// unchanged one adds nothing, a change adds one row and one event, and a lower version is a downgrade. Connection
// tests and backups (the engine's JobCatalog port) both record; the route pages the history newest first.
import { TOKENS, type HoldfastEvents, type JobCatalog } from '@holdfast/kernel';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { compareVersions } from '../src/adapter-configs/version-history.js';
import { createSite, startCatalog, type CatalogServer, type Site } from './harness.js';

describe('compareVersions', () => {
  it('orders dotted versions by their numbers', () => {
    expect(compareVersions('15.10', '15.9')).toBe(1);
    expect(compareVersions('10.11.6-MariaDB', '10.11.6-MariaDB')).toBe(0);
    expect(compareVersions('15.6', '16.2')).toBe(-1);
    expect(compareVersions('7.0', '7')).toBe(0);
  });
});

describe.each(['sqlite', 'postgresql'] as const)('engine version history on %s', (dialect) => {
  let site: Site;
  let server: CatalogServer;
  let events: HoldfastEvents['db_version_changed'][];

  beforeEach(async () => {
    site = await createSite(dialect);
    server = await startCatalog(site);
    events = [];
    server.container.resolve(TOKENS.EventBus).on('db_version_changed', (event) => void events.push(event));
  });
  afterEach(async () => {
    await server.close();
    await site.remove();
  });

  async function checkWith(id: string, version: string, edition = 'FakeDB'): Promise<void> {
    const updated = await server.call('PUT', `/api/adapters/${id}`, { config: { host: 'reachable', version, edition } });
    expect(updated.status, JSON.stringify(updated.json)).toBe(200);
    const tested = await server.call('POST', '/api/adapters/test-connection', { id });
    expect(tested.json).toMatchObject({ success: true, version, edition });
  }

  const history = async (id: string, query = '') => (await server.call('GET', `/api/adapters/${id}/versions${query}`)).json;

  it('records the first detection without an event, ignores repeats, and raises one event per change', async () => {
    const created = await server.call('POST', '/api/adapters', { name: 'orders db', type: 'database', adapterId: 'fake-versioned-db', config: { host: 'reachable', version: '15.4', edition: 'FakeDB' } });
    expect(created.status).toBe(201);
    const id = created.json.id as string;

    await checkWith(id, '15.4');
    await checkWith(id, '15.4');
    expect(await history(id)).toMatchObject({ total: 1, entries: [{ adapterConfigId: id, previousVersion: null, newVersion: '15.4', edition: 'FakeDB' }] });
    expect(events).toEqual([]);

    await checkWith(id, '16.2');
    expect(events).toEqual([{ configId: id, configName: 'orders db', previousVersion: '15.4', newVersion: '16.2', edition: 'FakeDB', isDowngrade: false }]);
    await checkWith(id, '15.6');
    expect(events.at(-1)).toMatchObject({ previousVersion: '16.2', newVersion: '15.6', isDowngrade: true });
    expect(events).toHaveLength(2);

    const page = await history(id);
    expect(page.total).toBe(3);
    expect(page.entries.map((entry: { newVersion: string }) => entry.newVersion)).toEqual(['15.6', '16.2', '15.4']);
    expect((await history(id, '?limit=1&offset=1')).entries).toMatchObject([{ previousVersion: '15.4', newVersion: '16.2' }]);
    expect((await server.call('GET', `/api/adapters/${id}`)).json.metadata).toMatchObject({ version: '15.6', edition: 'FakeDB' });
  });

  it('records what a backup detected through the JobCatalog port, keeping the known edition', async () => {
    const created = await server.call('POST', '/api/adapters', { name: 'maria', type: 'database', adapterId: 'fake-versioned-db', config: { host: 'reachable', version: '10.11.6', edition: 'MariaDB' } });
    const id = created.json.id as string;
    await checkWith(id, '10.11.6', 'MariaDB');
    const jobs = server.container.resolve<JobCatalog>(TOKENS.JobCatalog);
    await jobs.recordSourceVersion!(id, '10.11.6');
    expect(events).toEqual([]);
    await jobs.recordSourceVersion!(id, '10.11.8');
    expect(events).toMatchObject([{ previousVersion: '10.11.6', newVersion: '10.11.8', edition: 'MariaDB', isDowngrade: false }]);
    expect((await history(id)).total).toBe(2);
  });

  it('completes the row when a connection test learns the edition of the version a backup detected first: no change, no event', async () => {
    const created = await server.call('POST', '/api/adapters', { name: 'first by backup', type: 'database', adapterId: 'fake-versioned-db', config: { host: 'reachable', version: '15.20', edition: 'PostgreSQL 15.20' } });
    const id = created.json.id as string;
    const jobs = server.container.resolve<JobCatalog>(TOKENS.JobCatalog);
    await jobs.recordSourceVersion!(id, '15.20');
    expect((await history(id)).entries).toMatchObject([{ previousVersion: null, newVersion: '15.20', edition: null }]);
    await checkWith(id, '15.20', 'PostgreSQL 15.20');
    expect(await history(id)).toMatchObject({ total: 1, entries: [{ previousVersion: null, newVersion: '15.20', edition: 'PostgreSQL 15.20' }] });
    expect((await server.call('GET', `/api/adapters/${id}`)).json.metadata).toMatchObject({ version: '15.20', edition: 'PostgreSQL 15.20' });
    // A different known edition of the same version is a change.
    await checkWith(id, '15.20', 'PostgreSQL 15.20 (other build)');
    expect(events).toMatchObject([{ previousVersion: '15.20', newVersion: '15.20', edition: 'PostgreSQL 15.20 (other build)' }]);
    expect((await history(id)).total).toBe(2);
  });

  it('adds one first row when a backup and a health check detect the version at the same moment', async () => {
    const created = await server.call('POST', '/api/adapters', { name: 'together', type: 'database', adapterId: 'fake-versioned-db', config: { host: 'reachable', version: '8.0.36', edition: 'MySQL' } });
    const id = created.json.id as string;
    const jobs = server.container.resolve<JobCatalog>(TOKENS.JobCatalog);
    await Promise.all([jobs.recordSourceVersion!(id, '8.0.36'), jobs.recordSourceVersion!(id, '8.0.36', 'MySQL'), jobs.recordSourceVersion!(id, '8.0.36')]);
    expect(await history(id)).toMatchObject({ total: 1, entries: [{ previousVersion: null, newVersion: '8.0.36', edition: 'MySQL' }] });
    expect(events).toEqual([]);
  });

  it('answers 404 for an unknown source and 400 for a bad page', async () => {
    expect((await server.call('GET', '/api/adapters/00000000-0000-4000-8000-000000000000/versions')).status).toBe(404);
    const created = await server.call('POST', '/api/adapters', { name: 'x', type: 'database', adapterId: 'fake-versioned-db', config: { host: 'reachable', version: '1' } });
    expect((await server.call('GET', `/api/adapters/${created.json.id}/versions?limit=0`)).status).toBe(400);
  });
});
