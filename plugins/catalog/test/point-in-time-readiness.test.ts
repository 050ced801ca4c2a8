// Issue 44 acceptance 5 (PostgreSQL alike), the catalog's side: a job on a source in a point-in-time mode is saved
// only when the source's readiness check finds no problem; otherwise 422 naming every problem and nothing is stored.
// An unreachable server and one that never answers (time bound shortened to 300 ms here) refuse too; warnings do not;
// a source in another mode is never asked. Driven by a test source (test/point-in-time-fixture.ts); the real MySQL
// and PostgreSQL sources against real servers are in apps/server/test/pitr-job-readiness.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSite, snapshotTables, startCatalog, type CatalogServer, type JsonValue, type Site } from './harness.js';
import { fakePitrDatabase, readinessCalls } from './point-in-time-fixture.js';

const TIMEOUT_MS = 300;

describe('saving a job on a point-in-time source (readiness check)', () => {
  let site: Site;
  let server: CatalogServer;
  let storeId: string;

  const ok = (reply: { status: number; json: JsonValue; text: string }, status = 201) => {
    expect(reply.status, reply.text).toBe(status);
    return reply.json;
  };
  const source = async (name: string, config: Record<string, unknown>) =>
    ok(await server.call('POST', '/api/adapters', { name, type: 'database', adapterId: 'fake-pitr-db', config })).id as string;
  const jobBody = (name: string, sourceId: string, extra: Record<string, unknown> = {}) => ({
    name,
    schedule: '0 3 * * *',
    sourceId,
    databases: [],
    destinations: [{ configId: storeId }],
    ...extra,
  });
  const jobsAndDestinations = async () => {
    const tables = await snapshotTables(server.db);
    return { jobs: tables.jobs, destinations: tables.job_destinations };
  };
  const callsFor = (host: string) => readinessCalls.filter((call) => call.host === host);

  beforeAll(async () => {
    site = await createSite('sqlite');
    server = await startCatalog(site, undefined, { adapters: [fakePitrDatabase], catalog: { pointInTimeReadinessTimeoutMs: TIMEOUT_MS } });
    storeId = ok(await server.call('POST', '/api/adapters', { name: 'Bucket', type: 'storage', adapterId: 'fake-store', config: { bucket: 'b', accessKeyId: 'AK', secretAccessKey: 'sk' } })).id;
  });
  afterAll(async () => {
    await server?.close();
    await site?.remove();
  });

  it('refuses a job whose source has problems with 422 naming every one, and stores nothing', async () => {
    const sourceId = await source('broken pitr', {
      host: 'broken',
      mode: 'point-in-time',
      problems: ['binary logging is off on broken:3306 (log_bin); set it.', 'account lacks REPLICATION SLAVE.'],
      warnings: ['binlog_format is MIXED.'],
    });
    const before = await jobsAndDestinations();
    const listed = ok(await server.call('GET', '/api/jobs'), 200);
    const refused = await server.call('POST', '/api/jobs', jobBody('refused job', sourceId));
    expect(refused.status, refused.text).toBe(422);
    expect(refused.json.error).toBe(
      'source "broken pitr" cannot serve point-in-time recovery: binary logging is off on broken:3306 (log_bin); set it. account lacks REPLICATION SLAVE.',
    );
    expect(refused.json.details).toEqual({
      source: 'broken pitr',
      checked: true,
      problems: ['binary logging is off on broken:3306 (log_bin); set it.', 'account lacks REPLICATION SLAVE.'],
      warnings: ['binlog_format is MIXED.'],
    });
    expect(callsFor('broken')).toHaveLength(1);
    expect(await jobsAndDestinations()).toEqual(before);
    expect(ok(await server.call('GET', '/api/jobs'), 200)).toEqual(listed);
  });

  it('saves a job whose source has warnings only', async () => {
    const sourceId = await source('warned pitr', { host: 'warned', mode: 'point-in-time', warnings: ['max_slot_wal_keep_size is -1 (unlimited).'] });
    const saved = ok(await server.call('POST', '/api/jobs', jobBody('warned job', sourceId)));
    expect(saved).toMatchObject({ name: 'warned job', sourceId });
    expect(callsFor('warned')).toHaveLength(1);
    expect(server.logs.join('')).toContain('max_slot_wal_keep_size is -1 (unlimited).');
  });

  it('never asks a source in another mode', async () => {
    const sourceId = await source('logical', { host: 'logical', problems: ['would refuse'] });
    ok(await server.call('POST', '/api/jobs', jobBody('logical job', sourceId)));
    expect(callsFor('logical')).toHaveLength(0);
  });

  it('refuses when the server cannot be reached, saying it could not be checked', async () => {
    const sourceId = await source('unreachable pitr', { host: 'unreachable', mode: 'point-in-time', answer: 'unreachable' });
    const before = await jobsAndDestinations();
    const refused = await server.call('POST', '/api/jobs', jobBody('unreachable job', sourceId));
    expect(refused.status, refused.text).toBe(422);
    expect(refused.json.error).toContain('source "unreachable pitr" could not be checked for point-in-time recovery, so nothing was saved: cannot connect to unreachable:5432: connect ECONNREFUSED');
    expect(refused.json.error).not.toContain('[source-fake-pitr-db]');
    expect(refused.json.details).toMatchObject({ checked: false });
    expect(await jobsAndDestinations()).toEqual(before);
  });

  it('refuses when the server does not answer within the time bound, and aborts the check', async () => {
    const sourceId = await source('silent pitr', { host: 'silent', mode: 'point-in-time', answer: 'silent' });
    const before = await jobsAndDestinations();
    const started = Date.now();
    const refused = await server.call('POST', '/api/jobs', jobBody('silent job', sourceId));
    const elapsed = Date.now() - started;
    expect(refused.status, refused.text).toBe(422);
    expect(refused.json.error).toContain('source "silent pitr" could not be checked for point-in-time recovery, so nothing was saved: its server did not answer within 0.3 seconds');
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_MS - 20);
    expect(elapsed).toBeLessThan(5_000);
    expect(callsFor('silent')).toEqual([{ host: 'silent', aborted: true }]);
    expect(await jobsAndDestinations()).toEqual(before);
  });

  it('checks an update that moves a job to a point-in-time source or switches it on, and no other edit', async () => {
    const logicalId = await source('logical for update', { host: 'logical-update' });
    const brokenId = await source('broken for update', { host: 'broken-update', mode: 'point-in-time', problems: ['wal_level is "minimal".'] });
    const job = ok(await server.call('POST', '/api/jobs', jobBody('moving job', logicalId)));
    const stored = ok(await server.call('GET', `/api/jobs/${job.id}`), 200);

    const moved = await server.call('PUT', `/api/jobs/${job.id}`, { sourceId: brokenId, name: 'moved job' });
    expect(moved.status, moved.text).toBe(422);
    expect(moved.json.error).toBe('source "broken for update" cannot serve point-in-time recovery: wal_level is "minimal".');
    expect(ok(await server.call('GET', `/api/jobs/${job.id}`), 200)).toEqual(stored);
    expect(callsFor('broken-update')).toHaveLength(1);

    // A job that is already on a point-in-time source (it passed when saved; the server broke since).
    const fineId = await source('breaks later', { host: 'breaks-later', mode: 'point-in-time' });
    const onIt = ok(await server.call('POST', '/api/jobs', jobBody('job on a server that breaks', fineId, { enabled: false })));
    expect(callsFor('breaks-later')).toHaveLength(1);
    ok(await server.call('PUT', `/api/adapters/${fineId}`, { config: { host: 'breaks-later', mode: 'point-in-time', problems: ['max_wal_senders is 0.'] } }), 200);
    // Renaming, rescheduling and keeping it disabled go through without asking the server.
    ok(await server.call('PUT', `/api/jobs/${onIt.id}`, { name: 'renamed while broken', schedule: '0 4 * * *', enabled: false, sourceId: fineId }), 200);
    expect(callsFor('breaks-later')).toHaveLength(1);
    // Switching it on starts its stream: checked, refused, still disabled.
    const switchedOn = await server.call('PUT', `/api/jobs/${onIt.id}`, { enabled: true });
    expect(switchedOn.status, switchedOn.text).toBe(422);
    expect(switchedOn.json.error).toContain('max_wal_senders is 0.');
    expect(ok(await server.call('GET', `/api/jobs/${onIt.id}`), 200)).toMatchObject({ name: 'renamed while broken', enabled: false });
    expect(callsFor('breaks-later')).toHaveLength(2);
    // Once the server is fixed, switching on saves.
    ok(await server.call('PUT', `/api/adapters/${fineId}`, { config: { host: 'breaks-later', mode: 'point-in-time' } }), 200);
    expect(ok(await server.call('PUT', `/api/jobs/${onIt.id}`, { enabled: true }), 200)).toMatchObject({ enabled: true });
  });

  it('refuses a clone of a job whose point-in-time source broke since', async () => {
    const sourceId = await source('clone source', { host: 'clone-source', mode: 'point-in-time' });
    const job = ok(await server.call('POST', '/api/jobs', jobBody('to clone', sourceId)));
    ok(await server.call('PUT', `/api/adapters/${sourceId}`, { config: { host: 'clone-source', mode: 'point-in-time', problems: ['no replication slots.'] } }), 200);
    const before = await jobsAndDestinations();
    const clone = await server.call('POST', `/api/jobs/${job.id}/clone`, {});
    expect(clone.status, clone.text).toBe(422);
    expect(clone.json.error).toContain('no replication slots.');
    expect(await jobsAndDestinations()).toEqual(before);
  });

  it('checks a source its jobs use when it is switched into a point-in-time mode; unused sources are not asked', async () => {
    const usedId = await source('switched source', { host: 'switched' });
    ok(await server.call('POST', '/api/jobs', jobBody('job on switched source', usedId)));
    const storedSource = ok(await server.call('GET', `/api/adapters/${usedId}`), 200);
    const refused = await server.call('PUT', `/api/adapters/${usedId}`, { config: { host: 'switched', mode: 'point-in-time', problems: ['role "backup" lacks the REPLICATION privilege.'] } });
    expect(refused.status, refused.text).toBe(422);
    expect(refused.json.error).toBe('source "switched source" cannot serve point-in-time recovery: role "backup" lacks the REPLICATION privilege.');
    expect(ok(await server.call('GET', `/api/adapters/${usedId}`), 200)).toEqual(storedSource);
    expect(storedSource.config).toMatchObject({ mode: 'logical' });
    expect(callsFor('switched')).toHaveLength(1);
    ok(await server.call('PUT', `/api/adapters/${usedId}`, { config: { host: 'switched', mode: 'point-in-time' } }), 200);
    expect(callsFor('switched')).toHaveLength(2);

    const unusedId = await source('unused source', { host: 'unused' });
    ok(await server.call('PUT', `/api/adapters/${unusedId}`, { config: { host: 'unused', mode: 'point-in-time', problems: ['anything.'] } }), 200);
    expect(callsFor('unused')).toHaveLength(0);
  });
});
