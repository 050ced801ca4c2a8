import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HistoryStore } from '../../src/history/history-store.js';
import { DIALECTS, createSite, startEngineServer, type EngineServer, type Site } from './harness.js';
import { insertExecutions, makeExecutions, newestFirst, type SeededExecution } from './seed.js';

const JOB_NAMES = ['Orders DB', 'crm', 'Wiki pages'];

describe.each(DIALECTS)('GET /api/history on %s', (dialect) => {
  let site: Site;
  let server: EngineServer;
  let seeded: SeededExecution[];
  let jobIds: string[];
  const nameOf = new Map<string, string>();

  beforeAll(async () => {
    site = await createSite(dialect);
    server = await startEngineServer(site);
    server.settings.set('systemTimezone', 'Europe/Berlin');
    jobIds = [];
    for (const name of JOB_NAMES) {
      const id = await server.addJob({ name });
      jobIds.push(id);
      nameOf.set(id, name);
    }
    seeded = makeExecutions(300, jobIds, { seed: dialect.length });
    await insertExecutions(server.db, seeded);
  });

  afterAll(async () => {
    await server?.close();
    await site?.remove();
  });

  const ids = (rows: Array<{ id: string }>) => rows.map((row) => row.id);

  it('answers the newest 100 without parameters, with the system time zone, job names and no logs', async () => {
    const reply = await server.call('GET', '/api/history');
    expect(reply.status).toBe(200);
    expect(ids(reply.json.executions)).toEqual(ids(newestFirst(seeded).slice(0, 100)));
    expect(reply.json.systemTimezone).toBe('Europe/Berlin');
    expect(reply.json).not.toHaveProperty('total');
    for (const entry of reply.json.executions) {
      expect(entry).not.toHaveProperty('logs');
      const source = seeded.find((row) => row.id === entry.id)!;
      expect(entry.jobName).toBe(source.jobId ? nameOf.get(source.jobId) : source.type);
      expect(entry.triggerType).toBe(source.triggerType);
      expect(entry.triggerLabel).toBe(source.triggerLabel);
      expect(entry.path).toBe(source.path);
      expect(entry.metadata).toBe(source.metadata);
      expect(entry.startedAt).toBe(source.startedAt.toISOString());
    }
  });

  it('pages with a total', async () => {
    const reply = await server.call('GET', '/api/history?page=3&pageSize=40');
    expect(reply.status).toBe(200);
    expect(ids(reply.json.executions)).toEqual(ids(newestFirst(seeded).slice(80, 120)));
    expect(reply.json).toMatchObject({ total: seeded.length, page: 3, pageSize: 40 });
    const defaultSize = await server.call('GET', '/api/history?page=1');
    expect(defaultSize.json.pageSize).toBe(50);
    expect(defaultSize.json.executions).toHaveLength(50);
  });

  it('filters by type, several statuses and trigger, with facet counts of the filtered set', async () => {
    const reply = await server.call('GET', '/api/history?type=Backup&status=Failed,Partial&trigger=Scheduler,Api&pageSize=500&facets=true');
    const expected = newestFirst(seeded).filter(
      (row) => row.type === 'Backup' && ['Failed', 'Partial'].includes(row.status) && ['Scheduler', 'Api'].includes(row.triggerType),
    );
    expect(expected.length).toBeGreaterThan(5);
    expect(ids(reply.json.executions)).toEqual(ids(expected));
    expect(reply.json.total).toBe(expected.length);
    const countBy = (key: 'status' | 'type' | 'triggerType') =>
      expected.reduce<Record<string, number>>((counts, row) => ({ ...counts, [row[key]]: (counts[row[key]] ?? 0) + 1 }), {});
    expect(reply.json.facets).toEqual({ status: countBy('status'), type: countBy('type'), trigger: countBy('triggerType') });
  });

  it('scopes to one job or to executions without a job', async () => {
    const oneJob = await server.call('GET', `/api/history?scope=job:${jobIds[1]}&pageSize=500`);
    expect(ids(oneJob.json.executions)).toEqual(ids(newestFirst(seeded).filter((row) => row.jobId === jobIds[1])));
    const system = await server.call('GET', '/api/history?scope=system&pageSize=500');
    const withoutJob = newestFirst(seeded).filter((row) => row.jobId === null);
    expect(withoutJob.length).toBeGreaterThan(0);
    expect(ids(system.json.executions)).toEqual(ids(withoutJob));
  });

  it('searches job name, path and trigger label case-insensitively, with LIKE wildcards taken literally', async () => {
    const matches = (text: string) =>
      newestFirst(seeded).filter((row) =>
        [row.jobId ? nameOf.get(row.jobId) : '', row.path ?? '', row.triggerLabel].some((field) => field!.toLowerCase().includes(text.toLowerCase())),
      );
    for (const text of ['ORDERS', 'bob', 'wiki', 'nightly_%']) {
      const reply = await server.call('GET', `/api/history?search=${encodeURIComponent(text)}&pageSize=500`);
      expect(reply.status).toBe(200);
      expect(matches(text).length).toBeGreaterThan(0);
      expect(ids(reply.json.executions)).toEqual(ids(matches(text)));
    }
    const wildcard = await server.call('GET', `/api/history?search=${encodeURIComponent('_%')}&page=1`);
    expect(wildcard.json.total).toBe(matches('_%').length);
  });

  it('rejects bad parameters with 400 naming the field', async () => {
    for (const [query, field] of [
      ['pageSize=501', 'pageSize'],
      ['page=0', 'page'],
      ['page=abc', 'page'],
      ['status=Done', 'status'],
      ['type=Backup,Nope', 'type'],
      ['trigger=Cron', 'trigger'],
      ['scope=jobs', 'scope'],
      [`search=${'x'.repeat(201)}`, 'search'],
    ] as const) {
      const reply = await server.call('GET', `/api/history?${query}`);
      expect(reply.status, query).toBe(400);
      expect(JSON.stringify(reply.json), query).toContain(field);
    }
  });

  it('needs history:read and narrows scoped grants to the granted jobs', async () => {
    expect((await server.call('GET', '/api/history', 'nobody')).status).toBe(401);
    expect((await server.call('GET', '/api/history', 'perm:jobs:read')).status).toBe(403);
    expect((await server.call('GET', '/api/history', 'perm:history:read')).json.executions).toHaveLength(100);
    const scoped = `scoped:${jobIds[0]},${jobIds[2]}`;
    const visible = newestFirst(seeded).filter((row) => row.jobId === jobIds[0] || row.jobId === jobIds[2]);
    const all = await server.call('GET', '/api/history?pageSize=500&facets=true', scoped);
    expect(all.status).toBe(200);
    expect(ids(all.json.executions)).toEqual(ids(visible));
    expect(all.json.total).toBe(visible.length);
    expect((await server.call('GET', `/api/history?scope=job:${jobIds[1]}&page=1`, scoped)).json.total).toBe(0);
    expect((await server.call('GET', '/api/history?scope=system&page=1', scoped)).json.total).toBe(0);
  });
});

describe('history query plans on postgresql', () => {
  let site: Site;
  let server: EngineServer;
  let jobIds: string[];

  beforeAll(async () => {
    site = await createSite('postgresql');
    server = await startEngineServer(site);
    jobIds = [await server.addJob({ name: 'Orders DB' }), await server.addJob({ name: 'crm' })];
    await insertExecutions(server.db, makeExecutions(500, jobIds));
    await server.knex().raw('ANALYZE executions');
  });

  afterAll(async () => {
    await server?.close();
    await site?.remove();
  });

  it('serves every filter from an index (EXPLAIN with sequential scans priced out)', async () => {
    const store = new HistoryStore(server.db);
    const base = { jobIds: null, isWithoutJob: false, types: [], statuses: [], triggers: [], search: null };
    const filters = [
      base,
      { ...base, statuses: ['Failed', 'Partial'] },
      { ...base, types: ['Restore'] },
      { ...base, triggers: ['Scheduler'] },
      { ...base, jobIds: [jobIds[0]!] },
      { ...base, search: { text: 'orders', jobIds: [jobIds[0]!] } },
    ];
    const knex = server.knex();
    for (const filter of filters) {
      const { sql, bindings } = store.pageSql(filter, 0, 50);
      const plan = await knex.transaction(async (trx) => {
        await trx.raw('SET LOCAL enable_seqscan = off');
        const result = await trx.raw(`EXPLAIN ${sql.replace(/\$\d+/g, '?')}`, bindings as never);
        return (result.rows as Array<Record<string, string>>).map((row) => row['QUERY PLAN']).join('\n');
      });
      expect(plan, JSON.stringify(filter)).toMatch(/Index (Only )?Scan|Bitmap Index Scan/);
      expect(plan, JSON.stringify(filter)).not.toMatch(/Seq Scan on executions/);
    }
  });
});
