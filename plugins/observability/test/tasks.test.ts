import { ConflictError, EventBus, type HoldfastEvents } from '@holdfast/kernel';
import { afterEach, describe, expect, it } from 'vitest';
import { SystemTaskRunner, TaskLease, TaskRunStore, isValidCron, statusAfter, type TaskHandler } from '../src/index.js';
import { observabilityDatabase, type ObservabilityDatabase } from './support/database.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('health status thresholds', () => {
  it('ONLINE below degradedAfter, DEGRADED from it, OFFLINE from offlineAfter', () => {
    const thresholds = { degradedAfter: 1, offlineAfter: 3 };
    expect([0, 1, 2, 3, 9].map((failures) => statusAfter(failures, thresholds))).toEqual(['ONLINE', 'DEGRADED', 'DEGRADED', 'OFFLINE', 'OFFLINE']);
    expect(statusAfter(1, { degradedAfter: 2, offlineAfter: 2 })).toBe('ONLINE');
    expect(statusAfter(2, { degradedAfter: 2, offlineAfter: 2 })).toBe('OFFLINE');
  });

  it('cron validation accepts 5-part expressions only', () => {
    expect(isValidCron('*/15 * * * *')).toBe(true);
    expect(isValidCron('0 0 * * * *')).toBe(false);
    expect(isValidCron('61 * * * *')).toBe(false);
  });
});

describe.each(['sqlite', 'postgresql'] as const)('task leases and the runner on %s', (dialect) => {
  let site: ObservabilityDatabase | undefined;
  afterEach(async () => {
    await site?.close();
    site = undefined;
  });

  it('one holder at a time; a claimed slot runs once; an expired lease is taken over', async () => {
    site = await observabilityDatabase(dialect);
    const other = await site.open();
    const a = new TaskLease(() => site!.db, 'process-a');
    const b = new TaskLease(() => other, 'process-b');
    expect(await a.acquire('HEALTH_CHECK', 60_000)).toBe(true);
    expect(await b.acquire('HEALTH_CHECK', 60_000)).toBe(false);
    expect(await b.acquire('CLEAN_OLD_LOGS', 60_000)).toBe(true);
    await a.release('HEALTH_CHECK');
    expect(await b.acquire('HEALTH_CHECK', 60_000)).toBe(true);
    await b.release('HEALTH_CHECK');

    const slot = Date.UTC(2026, 10, 24, 12, 0);
    expect(await a.acquire('UPDATE_DB_VERSIONS', 60_000, slot)).toBe(true);
    await a.release('UPDATE_DB_VERSIONS');
    // The other process's timer fired a moment later for the same slot: it must not run it again.
    expect(await b.acquire('UPDATE_DB_VERSIONS', 60_000, slot)).toBe(false);
    expect(await b.acquire('UPDATE_DB_VERSIONS', 60_000, slot + 60_000)).toBe(true);
    await b.release('UPDATE_DB_VERSIONS');

    expect(await a.acquire('REFRESH_STORAGE_STATS', 150)).toBe(true);
    expect(await b.acquire('REFRESH_STORAGE_STATS', 60_000)).toBe(false);
    await sleep(250);
    // A dead holder never releases; its lease expires.
    expect(await b.acquire('REFRESH_STORAGE_STATS', 60_000)).toBe(true);
    expect(await a.renew('REFRESH_STORAGE_STATS', 60_000)).toBe(false);
  });

  it('two runners (two processes) firing the same slot run the task once; run-now elsewhere gets 409; failures raise system_error', async () => {
    site = await observabilityDatabase(dialect);
    const other = await site.open();
    await site.db.em().getKnex()('system_task_schedules').insert({ task: 'HEALTH_CHECK', enabled: true, schedule: '*/15 * * * *', updated_at: site.db.em().getPlatform().processDateProperty(new Date()) });
    let calls = 0;
    let shouldFail = false;
    const handler: TaskHandler = async () => {
      calls += 1;
      await sleep(300);
      if (shouldFail) throw new Error('listing exploded');
      return 'checked';
    };
    const errors: Array<HoldfastEvents['system_error']> = [];
    const events = new EventBus();
    events.on('system_error', (payload) => void errors.push(payload));
    const runnerOn = (database: typeof other) =>
      new SystemTaskRunner({
        database: () => database,
        settings: () => undefined,
        schedules: async () => [{ task: 'HEALTH_CHECK', enabled: true, schedule: '*/15 * * * *' }],
        handlers: new Map([['HEALTH_CHECK', handler]]),
        runs: new TaskRunStore(() => database),
        events: () => events,
        logger: { debug() {}, info() {}, warn() {}, error() {} } as never,
      });
    const [first, second] = [runnerOn(site.db), runnerOn(other)];
    const outcomes = await Promise.all([first.tick('HEALTH_CHECK'), second.tick('HEALTH_CHECK')]);
    expect(outcomes.filter(Boolean)).toHaveLength(1);
    expect(calls).toBe(1);
    const runs = await new TaskRunStore(() => site!.db).page({ page: 1, pageSize: 10 });
    expect(runs.total).toBe(1);
    expect(runs.runs[0]).toMatchObject({ task: 'HEALTH_CHECK', trigger: 'Scheduler', status: 'Success', message: 'checked' });
    expect(runs.runs[0]!.durationMs).toBeGreaterThanOrEqual(250);
    const marked = await site.db.em().getKnex()('system_task_schedules').select('last_run_at').first();
    expect(marked.last_run_at).not.toBeNull();

    shouldFail = true;
    const { run, done } = await first.runNow('HEALTH_CHECK');
    expect(run.status).toBe('Running');
    await expect(second.runNow('HEALTH_CHECK')).rejects.toBeInstanceOf(ConflictError);
    await expect(first.runNow('HEALTH_CHECK')).rejects.toBeInstanceOf(ConflictError);
    const finished = await done;
    expect(finished).toMatchObject({ status: 'Failed', message: 'listing exploded', trigger: 'Manual' });
    expect(errors).toEqual([{ message: 'System task HEALTH_CHECK failed', source: 'system-task:HEALTH_CHECK', error: 'listing exploded' }]);
    // Free again once finished.
    shouldFail = false;
    expect((await (await second.runNow('HEALTH_CHECK')).done).status).toBe('Success');
    await expect(first.runNow('NO_SUCH_TASK')).rejects.toThrow('not found');
  });

  it('plans enabled tasks with a valid schedule in the system time zone, and follows schedule changes on reload', async () => {
    site = await observabilityDatabase(dialect);
    let schedules = [
      { task: 'HEALTH_CHECK', enabled: true, schedule: '30 4 * * *' },
      { task: 'CLEAN_OLD_LOGS', enabled: false, schedule: '30 3 * * *' },
      { task: 'UPDATE_DB_VERSIONS', enabled: true, schedule: '61 * * * *' },
      { task: 'UNKNOWN_TASK', enabled: true, schedule: '* * * * *' },
    ];
    const handlers = new Map<string, TaskHandler>(['HEALTH_CHECK', 'CLEAN_OLD_LOGS', 'UPDATE_DB_VERSIONS'].map((task) => [task, async () => 'ok']));
    const runner = new SystemTaskRunner(
      {
        database: () => site!.db,
        settings: () => ({ get: async <T>() => 'Asia/Kolkata' as T }),
        schedules: async () => schedules,
        handlers,
        runs: new TaskRunStore(() => site!.db),
        events: () => undefined,
        logger: { debug() {}, info() {}, warn() {}, error() {} } as never,
      },
      { reloadIntervalMs: 60_000, leaseMs: 60_000 },
    );
    await runner.start();
    try {
      const plan = runner.plan();
      expect(plan.map((entry) => entry.task)).toEqual(['HEALTH_CHECK']);
      const local = new Intl.DateTimeFormat('en-GB', { timeZone: 'Asia/Kolkata', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(plan[0]!.nextRun!);
      expect(local).toBe('04:30');
      schedules = [{ task: 'HEALTH_CHECK', enabled: true, schedule: '*/5 * * * *' }, { task: 'CLEAN_OLD_LOGS', enabled: true, schedule: '30 3 * * *' }];
      await runner.reload();
      expect(runner.plan().map((entry) => [entry.task, entry.schedule, entry.timezone])).toEqual([
        ['HEALTH_CHECK', '*/5 * * * *', 'Asia/Kolkata'],
        ['CLEAN_OLD_LOGS', '30 3 * * *', 'Asia/Kolkata'],
      ]);
    } finally {
      await runner.stop();
    }
    expect(runner.plan()).toEqual([]);
  });
});
