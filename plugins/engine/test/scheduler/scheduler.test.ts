import { silentLogger, TOKENS } from '@holdfast/kernel';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ENGINE } from '../../src/index.js';
import { CatalogDirectory, type JobDirectory } from '../../src/scheduler/job-directory.js';
import { PostgresAdvisoryLock, SingleProcessLock, type LeaderLock } from '../../src/scheduler/leader-lock.js';
import { JobScheduler, type RunEnqueuer } from '../../src/scheduler/scheduler.js';
import { compressedClock, schedulerClockFrom } from '../../src/scheduler/scheduler-clock.js';
import { DatabaseSlotState } from '../../src/scheduler/slot-state.js';
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

function schedulerOf(server: EngineServer, lock: LeaderLock = new SingleProcessLock(), timings = { reloadIntervalMs: 60_000, leaderRetryMs: 60_000 }, withState = false): JobScheduler {
  const scheduler = new JobScheduler(
    {
      database: server.db,
      jobs: () => new CatalogDirectory(() => server.container.resolve(TOKENS.JobCatalog)),
      settings: () => ({ get: async <T>(key: string) => server.settings.get(key) as T }),
      enqueue: () => server.container.resolve(ENGINE) as RunEnqueuer,
      lock,
      logger: silentLogger,
      state: withState ? new DatabaseSlotState(server.db) : undefined,
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
    const fired: string[] = [];
    const scheduler = new JobScheduler({
      database: undefined as never,
      jobs: () => jobs as unknown as JobDirectory,
      settings: () => ({ get: async <T>() => 'UTC' as T }),
      enqueue: () => ({
        enqueueRun: async () => ({ id: 'unused' }),
        enqueueScheduledRuns: async (jobIds: string[]) => {
          for (const jobId of jobIds) fired.push(`${jobId}@${new Date().toISOString()}`);
          return new Map();
        },
      }),
      lock: new SingleProcessLock(),
      logger: silentLogger,
    });
    cleanup.push(() => scheduler.stop());
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'], now: new Date('2030-05-06T07:08:30.000Z') });
    // One cycle takes the (single-process) lock and plans: only the leader arms the timer.
    await scheduler.runCycle();
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
      // Only this test's database: pg_locks lists every database's advisory locks, and other suites' servers (running at
      // the same time on the shared PostgreSQL) hold the same scheduler lock key in theirs.
      `SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = ? AND granted AND pid <> pg_backend_pid()
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
      [0x48665363],
    );
    // Leadership flips before the new leader's plan is loaded, so wait for the plan itself.
    await vi.waitFor(() => expect(second.plan().map((entry) => entry.jobId)).toEqual([job]), { timeout: 5000, interval: 50 });
    await vi.waitFor(() => expect(first.plan()).toEqual([]), { timeout: 5000, interval: 50 });
    expect([first.isLeader, second.isLeader]).toEqual([false, true]);

    const locks = await one.knex().raw(`SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND objid = ? AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`, [0x48665363]);
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

describe('scheduler slots across processes (issue 18)', () => {
  const slotRows = (server: EngineServer, jobId: string) =>
    server.knex()('executions').select('status', 'scheduled_for').where({ job_id: jobId, trigger_type: 'Scheduler' }).orderBy('scheduled_for');

  it('queues a slot of a job once, even when a second scheduler fires it after the first run ended', async () => {
    const { site, server: one } = await serverOn('postgresql');
    const { server: two } = await serverOn('postgresql', site);
    const job = await one.addJob({ name: 'minutely', schedule: '* * * * *' });
    const slot = new Date('2030-01-01T00:05:00.000Z');
    const firstId = await schedulerOf(one).tick(job, slot);
    expect(firstId).toEqual(expect.any(String));
    await one.knex()('executions').where({ id: firstId }).update({ status: 'Success' });
    expect(await schedulerOf(two).tick(job, slot)).toBeNull();
    expect(await schedulerOf(two).tick(job, new Date('2030-01-01T00:06:00.000Z'))).toEqual(expect.any(String));
    expect((await slotRows(one, job)).map((row) => new Date(row.scheduled_for).toISOString())).toEqual(['2030-01-01T00:05:00.000Z', '2030-01-01T00:06:00.000Z']);
  });

  it('a process that takes the scheduler over queues the slots missed since the last record, within the catch-up window', async () => {
    const { server } = await serverOn('postgresql');
    const job = await server.addJob({ name: 'minutely', schedule: '* * * * *' });
    const state = new DatabaseSlotState(server.db);
    // The previous scheduler last fired 2.5 minutes ago: two or three minute slots fell due since.
    const through = Date.now() - 150_000;
    await state.write(through, 'gone');
    const scheduler = schedulerOf(server, new PostgresAdvisoryLock(server.db), { reloadIntervalMs: 60_000, leaderRetryMs: 60_000 }, true);
    await scheduler.start();
    const rows = await slotRows(server, job);
    // The first missed slot is queued; the later ones meet its Pending run and are skipped (the Pending rule).
    expect(rows).toHaveLength(1);
    expect(new Date(rows[0].scheduled_for).getTime()).toBe(Math.ceil((through + 1) / 60_000) * 60_000);
    expect(await state.read()).toBeGreaterThan(Date.now() - 61_000);
  });

  it('does not catch up slots older than the window', async () => {
    const { server } = await serverOn('postgresql');
    const job = await server.addJob({ name: 'minutely', schedule: '* * * * *' });
    const state = new DatabaseSlotState(server.db);
    await state.write(Date.now() - 11 * 60_000, 'gone');
    await schedulerOf(server, new PostgresAdvisoryLock(server.db), { reloadIntervalMs: 60_000, leaderRetryMs: 60_000 }, true).start();
    expect(await slotRows(server, job)).toEqual([]);
  });

  it('fires every slot of a compressed clock in order (600x: a minute every 100 ms)', async () => {
    const fired: Array<{ jobIds: string[]; slot: number; at: number }> = [];
    const origin = Date.now();
    const scheduler = new JobScheduler({
      database: undefined as never,
      jobs: () => ({ scheduledJobs: async () => ['a', 'b'].map((jobId) => ({ jobId, name: jobId, schedule: '* * * * *', enabled: true, scheduleFrom: 'job' as const })) }) as unknown as JobDirectory,
      settings: () => ({ get: async <T>() => 'UTC' as T }),
      enqueue: () => ({
        enqueueRun: async () => ({ id: 'unused' }),
        enqueueScheduledRuns: async (jobIds: string[], _trigger: unknown, slot: Date | null) => {
          fired.push({ jobIds, slot: slot!.getTime(), at: Date.now() });
          return new Map();
        },
      }),
      lock: new SingleProcessLock(),
      logger: silentLogger,
      clock: compressedClock(600, origin),
    });
    cleanup.push(() => scheduler.stop());
    await scheduler.start();
    await new Promise((resolve) => setTimeout(resolve, 1_050));
    await scheduler.stop();
    expect(fired.length).toBeGreaterThanOrEqual(8);
    for (const [i, entry] of fired.entries()) {
      // One statement per slot for both jobs, each slot a whole minute, one minute after the previous one.
      expect(entry.jobIds.sort()).toEqual(['a', 'b']);
      expect(entry.slot % 60_000).toBe(0);
      if (i > 0) expect(entry.slot - fired[i - 1]!.slot).toBe(60_000);
      // Fired when the compressed clock reached the slot (within the timer's resolution).
      expect(entry.at - (origin + (entry.slot - origin) / 600)).toBeGreaterThanOrEqual(-2);
      expect(entry.at - (origin + (entry.slot - origin) / 600)).toBeLessThan(60);
    }
  });

  it('reads the compressed clock from the environment and refuses it without a shared origin', () => {
    expect(schedulerClockFrom({}).scale).toBe(1);
    expect(() => schedulerClockFrom({ HOLDFAST_SCHEDULER_TIME_SCALE: '60' })).toThrow(/HOLDFAST_SCHEDULER_TIME_ORIGIN is required/);
    expect(() => schedulerClockFrom({ HOLDFAST_SCHEDULER_TIME_SCALE: 'fast', HOLDFAST_SCHEDULER_TIME_ORIGIN: '0' })).toThrow(/HOLDFAST_SCHEDULER_TIME_SCALE must be a number/);
    const clock = schedulerClockFrom({ HOLDFAST_SCHEDULER_TIME_SCALE: '60', HOLDFAST_SCHEDULER_TIME_ORIGIN: new Date(Date.now() - 1_000).toISOString() });
    expect(clock.now() - Date.now()).toBeGreaterThan(58_000);
    expect(clock.realDelayMs(60_000)).toBe(1_000);
  });
});
