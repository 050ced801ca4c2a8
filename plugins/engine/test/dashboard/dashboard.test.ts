import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdapterRegistry } from '@holdfast/kernel';
import storageLocal from '@holdfast/storage-local';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { dayOf, addDays } from '../../src/dashboard/zoned-days.js';
import { DIALECTS, createSite, startEngineServer, type EngineServer, type Site } from '../history/harness.js';
import { insertExecutions, makeExecutions, type SeededExecution } from '../history/seed.js';

const HOUR = 3600_000;
const ZONE = 'Pacific/Chatham'; // +12:45/+13:45: day boundaries that are not whole UTC hours

describe.each(DIALECTS)('dashboard figures on %s', (dialect) => {
  let site: Site;
  let server: EngineServer;
  let seeded: SeededExecution[];
  let scheduledJobs: number;
  const now = Date.now();

  beforeAll(async () => {
    site = await createSite(dialect);
    server = await startEngineServer(site);
    server.settings.set('systemTimezone', ZONE);
    const jobIds = [
      await server.addJob({ name: 'a', schedule: '0 1 * * *' }),
      await server.addJob({ name: 'b', schedule: 'not a cron' }),
      await server.addJob({ name: 'c', schedule: 'nope', presetSchedule: '*/5 * * * *' }),
      await server.addJob({ name: 'd', schedule: '0 2 * * *', enabled: false }),
    ];
    scheduledJobs = 2; // a (own schedule) and c (preset wins over its broken own one)
    seeded = makeExecutions(600, jobIds, { seed: 7, now, spanMs: 45 * 24 * HOUR });
    await insertExecutions(server.db, seeded);
  });

  afterAll(async () => {
    await server?.close();
    await site?.remove();
  });

  const endedBackups = (since: number, status: string) =>
    seeded.filter((row) => row.type === 'Backup' && row.status === status && row.endedAt && row.endedAt.getTime() >= since).length;

  it('counts jobs, active schedules and backups of the last 24 hours and 30 days', async () => {
    const reply = await server.call('GET', '/api/dashboard/stats');
    expect(reply.status).toBe(200);
    const day = now - 24 * HOUR;
    const month = now - 30 * 24 * HOUR;
    const finished = ['Success', 'Partial', 'Failed'].reduce((sum, status) => sum + endedBackups(month, status), 0);
    expect(finished).toBeGreaterThan(50);
    expect(reply.json).toEqual({
      success: true,
      data: {
        totalJobs: 4,
        activeSchedules: scheduledJobs,
        totalSnapshots: 0,
        totalStorageBytes: 0,
        successRate30d: Math.round((endedBackups(month, 'Success') / finished) * 1000) / 10,
        success24h: endedBackups(day, 'Success'),
        failed24h: endedBackups(day, 'Failed'),
        storageUpdatedAt: null,
      },
    });
  });

  it('gives per-day outcomes in the system time zone, the worst outcome winning', async () => {
    const to = dayOf(now, ZONE);
    const from = addDays(to, -20);
    const reply = await server.call('GET', `/api/dashboard/calendar?from=${from}&to=${to}`);
    expect(reply.status).toBe(200);
    expect(reply.json.data).toMatchObject({ from, to, timezone: ZONE });
    const days = reply.json.data.days as Array<{ date: string; success: number; partial: number; failed: number; outcome: string }>;
    expect(days).toHaveLength(21);
    for (const entry of days) {
      const runs = seeded.filter((row) => row.type === 'Backup' && dayOf(row.startedAt, ZONE) === entry.date);
      const count = (status: string) => runs.filter((row) => row.status === status).length;
      expect(entry, entry.date).toEqual({
        date: entry.date,
        success: count('Success'),
        partial: count('Partial'),
        failed: count('Failed'),
        outcome: count('Failed') > 0 ? 'failed' : count('Partial') > 0 ? 'partial' : count('Success') > 0 ? 'success' : 'none',
      });
    }
    expect(new Set(days.map((entry) => entry.outcome)).size).toBeGreaterThan(1);
  });

  it('defaults to the last 365 days and rejects bad ranges', async () => {
    const reply = await server.call('GET', '/api/dashboard/calendar');
    const days = reply.json.data.days as Array<{ date: string }>;
    expect(days).toHaveLength(365);
    expect(days.at(-1)!.date).toBe(dayOf(Date.now(), ZONE));
    for (const query of ['from=2026-02-30', 'to=yesterday', 'from=2026-03-02&to=2026-03-01', 'from=2000-01-01&to=2026-01-01']) {
      const bad = await server.call('GET', `/api/dashboard/calendar?${query}`);
      expect(bad.status, query).toBe(400);
      expect(bad.json.error, query).toMatch(/from|to|range/);
    }
    expect((await server.call('GET', '/api/dashboard/stats', 'perm:history:read')).status).toBe(403);
    expect((await server.call('GET', '/api/dashboard/calendar', 'perm:dashboard:read')).status).toBe(200);
  });
});

describe('storage statistics cache', () => {
  const cleanup: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0).reverse()) await step();
  });

  it('counts backups and bytes per destination after each backup event, keeping one snapshot row per refresh', async () => {
    const site = await createSite('sqlite');
    cleanup.push(() => site.remove());
    const root = await mkdtemp(join(tmpdir(), 'holdfast-stats-'));
    cleanup.push(() => rm(root, { recursive: true, force: true }));
    const registry = new AdapterRegistry();
    registry.register(storageLocal, { packageName: '@holdfast/storage-local', version: '0.1.0' });
    const server = await startEngineServer(site, { registry, startPlugins: true, engine: { reporting: { storageStatsIntervalMs: 3_600_000, isSchedulerEnabled: false } } });
    cleanup.push(() => server.close());

    const files: Record<string, Record<string, number>> = { one: { 'job/a.sql.gz': 120, 'job/a.sql.gz.meta.json': 30, 'job/b.sql.gz': 1000 }, two: { 'x.tar': 7 } };
    for (const [name, content] of Object.entries(files)) {
      const dir = join(root, name);
      for (const [key, size] of Object.entries(content)) {
        await mkdir(join(dir, key, '..'), { recursive: true });
        await writeFile(join(dir, key), Buffer.alloc(size, 1));
      }
      await server.knex()('adapter_configs').insert({ id: `cfg-${name}`, name, type: 'storage', adapter_id: 'local', config: JSON.stringify({ path: dir }) });
    }
    const expected = () => {
      const all = Object.values(files).flatMap((content) => Object.entries(content));
      return { totalSnapshots: all.filter(([key]) => !key.endsWith('.meta.json')).length, totalStorageBytes: all.reduce((sum, [, size]) => sum + size, 0) };
    };
    server.events.emit('backup_success', { executionId: 'e1', jobId: null });
    await vi.waitFor(async () => expect((await server.call('GET', '/api/dashboard/stats')).json.data).toMatchObject(expected()), { timeout: 5000, interval: 50 });
    const firstUpdate = (await server.call('GET', '/api/dashboard/stats')).json.data.storageUpdatedAt;
    expect(Date.parse(firstUpdate)).toBeGreaterThan(Date.now() - 60_000);

    files.two!['y.tar'] = 5000;
    await writeFile(join(root, 'two', 'y.tar'), Buffer.alloc(5000, 2));
    await server.events.emit('backup_failure', { executionId: 'e2', jobId: null });
    await vi.waitFor(async () => expect((await server.call('GET', '/api/dashboard/stats')).json.data).toMatchObject(expected()), { timeout: 5000, interval: 50 });
    const rows = await server.knex()('storage_snapshots').where({ adapter_config_id: 'cfg-two' }).orderBy('created_at');
    expect(rows.map((row) => Number(row.count))).toContain(2);
  });
});
