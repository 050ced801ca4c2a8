import { silentLogger, TOKENS } from '@holdfast/kernel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ENGINE } from '../../src/index.js';
import { CatalogDirectory, type JobDirectory } from '../../src/scheduler/job-directory.js';
import { PostgresAdvisoryLock, SingleProcessLock, type LeaderLock } from '../../src/scheduler/leader-lock.js';
import { JobScheduler, type RunEnqueuer } from '../../src/scheduler/scheduler.js';
import { createSite, startEngineServer, type EngineServer, type Site } from '../history/harness.js';

const cleanup: Array<() => Promise<void>> = [];
afterEach(async () => {
  vi.useRealTimers();
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function serverOn(dialect: 'sqlite' | 'postgresql', existing?: Site): Promise<{ site: Site; server: EngineServer }> {
  const site = existing ?? (await createSite(dialect));
  if (!existing) cleanup.push(() => site.remove());
  const server = await startEngineServer(site);
  cleanup.push(() => server.close());
  return { site, server };
}

function schedulerOf(server: EngineServer, lock: LeaderLock = new SingleProcessLock(), timings = { reloadIntervalMs: 60_000, leaderRetryMs: 60_000 }): JobScheduler {
  const scheduler = new JobScheduler(
    {
      database: server.db,
      jobs: () => new CatalogDirectory(() => server.container.resolve(TOKENS.JobCatalog)),
      settings: () => ({ get: async <T>(key: string) => server.settings.get(key) as T }),
      enqueue: () => server.container.resolve(ENGINE) as RunEnqueuer,
      lock,
      logger: silentLogger,
    },
    timings,
  );
  cleanup.push(() => scheduler.stop());
  return scheduler;
}

const scheduledRows = (server: EngineServer, jobId: string) =>
  server.knex()('executions').select('status', 'trigger_type', 'trigger_label', 'type').where({ job_id: jobId });

describe('job scheduler', () => {
  it('plans enabled jobs only, the preset schedule over the job schedule, in the system time zone', async () => {
    const { server } = await serverOn('sqlite');
    server.settings.set('systemTimezone', 'Asia/Kolkata');
    const plain = await server.addJob({ name: 'plain', schedule: '15 4 * * *' });
    const preset = await server.addJob({ name: 'preset', schedule: '0 1 * * *', presetSchedule: '45 22 * * 1' });
    const disabled = await server.addJob({ name: 'disabled', schedule: '* * * * *', enabled: false });
    const broken = await server.addJob({ name: 'broken', schedule: '61 * * * *' });
    const scheduler = schedulerOf(server);
    await scheduler.start();

    const plan = new Map(scheduler.plan().map((entry) => [entry.jobId, entry]));
    expect([...plan.keys()].sort()).toEqual([plain, preset].sort());
    expect(plan.has(disabled)).toBe(false);
    expect(plan.has(broken)).toBe(false);
    expect(plan.get(preset)!.schedule).toBe('45 22 * * 1');
    const local = (date: Date) => new Intl.DateTimeFormat('en-GB', { timeZone: 'Asia/Kolkata', hour: '2-digit', minute: '2-digit', weekday: 'short', hourCycle: 'h23' }).format(date);
    expect(local(plan.get(plain)!.nextRun!)).toMatch(/04:15$/);
    expect(local(plan.get(preset)!.nextRun!)).toBe('Mon 22:45');
    expect(plan.get(plain)!.timezone).toBe('Asia/Kolkata');
  });

  it('follows job, preset and time zone changes on reload', async () => {
    const { server } = await serverOn('sqlite');
    const first = await server.addJob({ name: 'first', schedule: '0 2 * * *' });
    const second = await server.addJob({ name: 'second', schedule: '0 3 * * *' });
    const scheduler = schedulerOf(server);
    await scheduler.start();
    expect(scheduler.plan().map((entry) => entry.jobId).sort()).toEqual([first, second].sort());

    await server.knex()('jobs').where({ id: first }).update({ enabled: false });
    await server.knex()('jobs').where({ id: second }).update({ schedule: '30 5 * * *' });
    server.settings.set('systemTimezone', 'America/New_York');
    await scheduler.reload();
    expect(scheduler.plan()).toEqual([expect.objectContaining({ jobId: second, schedule: '30 5 * * *', timezone: 'America/New_York' })]);
    const hour = new Intl.DateTimeFormat('en-GB', { timeZone: 'America/New_York', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(scheduler.plan()[0]!.nextRun!);
    expect(hour).toBe('05:30');
  });

  it('queues a Scheduler run on tick and never a second one while the first is Pending', async () => {
    const { server } = await serverOn('sqlite');
    const job = await server.addJob({ name: 'nightly', schedule: '* * * * *' });
    const scheduler = schedulerOf(server);
    const firstId = await scheduler.tick(job);
    expect(firstId).toEqual(expect.any(String));
    expect(await scheduler.tick(job)).toBeNull();
    expect(await scheduledRows(server, job)).toEqual([{ status: 'Pending', trigger_type: 'Scheduler', trigger_label: 'Scheduler', type: 'Backup' }]);

    await server.knex()('executions').where({ id: firstId }).update({ status: 'Success' });
    expect(await scheduler.tick(job)).toEqual(expect.any(String));
    expect((await scheduledRows(server, job)).map((row) => row.status).sort()).toEqual(['Pending', 'Success']);
    expect(await scheduler.tick('no-such-job')).toBeNull();
  });

  it('fires an every-minute job when the (fake) clock reaches each minute', async () => {
    // No database under fake timers (its pool waits on timers): jobs come from an in-memory directory and the
    // ticks are recorded; queueing on tick is covered by the test above.
    const jobs = { scheduledJobs: async () => [{ jobId: 'job-1', name: 'minutely', schedule: '* * * * *', enabled: true, scheduleFrom: 'job' as const }] };
    const scheduler = new JobScheduler({
      database: undefined as never,
      jobs: () => jobs as unknown as JobDirectory,
      settings: () => ({ get: async <T>() => 'UTC' as T }),
      enqueue: () => ({ enqueueRun: async () => ({ id: 'unused' }) }),
      lock: new SingleProcessLock(),
      logger: silentLogger,
    });
    cleanup.push(() => scheduler.stop());
    const fired: string[] = [];
    scheduler.tick = async (jobId) => {
      fired.push(`${jobId}@${new Date().toISOString()}`);
      return null;
    };
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'], now: new Date('2030-05-06T07:08:30.000Z') });
    await scheduler.reload();
    expect(scheduler.plan()[0]!.nextRun!.toISOString()).toBe('2030-05-06T07:09:00.000Z');
    await vi.advanceTimersByTimeAsync(29_000);
    expect(fired).toEqual([]);
    await vi.advanceTimersByTimeAsync(3 * 60_000);
    expect(fired.map((entry) => entry.slice(0, 'job-1@2030-05-06T07:09'.length))).toEqual(['job-1@2030-05-06T07:09', 'job-1@2030-05-06T07:10', 'job-1@2030-05-06T07:11']);
  });
});

describe('scheduler leadership on PostgreSQL', () => {
  it('lets exactly one of two processes schedule, and hands over when the holder goes away', async () => {
    const { site, server: one } = await serverOn('postgresql');
    const { server: two } = await serverOn('postgresql', site);
    const job = await one.addJob({ name: 'shared', schedule: '0 * * * *' });
    const fast = { reloadIntervalMs: 50, leaderRetryMs: 50 };
    const first = schedulerOf(one, new PostgresAdvisoryLock(one.db), fast);
    const second = schedulerOf(two, new PostgresAdvisoryLock(two.db), fast);
    await first.start();
    await second.start();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect([first.isLeader, second.isLeader]).toEqual([true, false]);
    expect(first.plan().map((entry) => entry.jobId)).toEqual([job]);
    expect(second.plan()).toEqual([]);

    // The holder's session dies (a crashed process): PostgreSQL frees the lock and the other process takes over.
    await one.knex().raw(
      `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = ? AND granted AND pid <> pg_backend_pid()`,
      [0x48665363],
    );
    // Leadership flips before the new leader's plan is loaded, so wait for the plan itself.
    await vi.waitFor(() => expect(second.plan().map((entry) => entry.jobId)).toEqual([job]), { timeout: 5000, interval: 50 });
    await vi.waitFor(() => expect(first.plan()).toEqual([]), { timeout: 5000, interval: 50 });
    expect([first.isLeader, second.isLeader]).toEqual([false, true]);

    const locks = await one.knex().raw(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = ? AND granted`, [0x48665363]);
    expect(locks.rows[0].n).toBe(1);
  });

  it('a stopped scheduler releases the lock for the next process', async () => {
    const { site, server: one } = await serverOn('postgresql');
    const { server: two } = await serverOn('postgresql', site);
    const fast = { reloadIntervalMs: 50, leaderRetryMs: 50 };
    const first = schedulerOf(one, new PostgresAdvisoryLock(one.db), fast);
    const second = schedulerOf(two, new PostgresAdvisoryLock(two.db), fast);
    await first.start();
    await second.start();
    expect(second.isLeader).toBe(false);
    await first.stop();
    await vi.waitFor(() => expect(second.isLeader).toBe(true), { timeout: 5000, interval: 50 });
  });
});
