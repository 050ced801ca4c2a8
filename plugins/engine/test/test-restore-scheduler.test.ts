// Scheduled test restores (issue 19): jobs with `testRestore.schedule` get a cron timer only in the process that
// holds the scheduler lock; a firing queues a test restore (trigger Scheduler) unless one is still Pending.
import { silentLogger, TOKENS } from '@holdfast/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExecutionStore } from '../src/index.js';
import { TestRestoreScheduler } from '../src/test-restore/test-restore-scheduler.js';
import { createTarget, startEngineServer, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

describe('test restore scheduler', () => {
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let store: ExecutionStore;

  beforeAll(async () => {
    target = await createTarget('sqlite');
    server = await startEngineServer(target);
    // Nothing is claimed: queued test restores stay Pending, so the duplicate rule can be observed.
    server.settings.values.set('maxConcurrentJobs', 0);
    store = new ExecutionStore(server.handle.container.resolve(Symbol.for('holdfast:orm-database') as never));
    server.catalog.addConfig({ configId: 'gen', name: 'Generated', kind: 'source', adapterId: 'generated', config: {} });
    server.catalog.addConfig({ configId: 'mem', name: 'Memory', kind: 'storage', adapterId: 'undeletable', config: {} });
    server.catalog.addJob({ id: 'weekly', name: 'weekly', testRestore: { target: { type: 'directory', path: '/tmp' }, schedule: '0 5 * * 0' } }, 'gen', [{ configId: 'mem' }]);
    server.catalog.addJob({ id: 'on-demand', name: 'on demand', testRestore: { target: { type: 'directory', path: '/tmp' } } }, 'gen', [{ configId: 'mem' }]);
  });

  afterAll(async () => {
    await server?.close();
    await target?.drop();
  });

  function scheduler(isLeader: () => boolean): TestRestoreScheduler {
    return new TestRestoreScheduler({
      catalog: () => server.catalog,
      settings: () => server.settings,
      store,
      enqueue: (jobId, trigger) => server.engine().enqueueTestRestore(jobId, trigger),
      isLeader,
      logger: silentLogger,
      events: server.handle.container.resolve(TOKENS.EventBus),
    });
  }

  it('plans only jobs with a test restore schedule, and only while this process is the scheduler', async () => {
    let leader = true;
    const planner = scheduler(() => leader);
    await planner.reload();
    expect(planner.plan().map(({ jobId, schedule }) => ({ jobId, schedule }))).toEqual([{ jobId: 'weekly', schedule: '0 5 * * 0' }]);
    expect(planner.plan()[0]!.nextRun!.getUTCDay()).toBe(0);
    leader = false;
    await planner.reload();
    expect(planner.plan()).toEqual([]);
    await planner.stop();
  });

  it('a firing queues a test restore as the scheduler, and not a second one while the first is pending', async () => {
    const planner = scheduler(() => true);
    const first = await planner.tick('weekly');
    expect(first).toBeTruthy();
    const row = await store.get(first!);
    expect(row).toMatchObject({ type: 'Restore', jobId: 'weekly', status: 'Pending', triggerType: 'Scheduler' });
    expect(JSON.parse(row!.request!)).toEqual({ testRestore: true, jobId: 'weekly' });
    expect(await planner.tick('weekly')).toBeNull();
    await planner.stop();
  });
});
