import { EventBus, silentLogger, type DatabasePort, type HoldfastEvents } from '@holdfast/kernel';
import { describe, expect, it } from 'vitest';
import { StorageStats } from '../src/dashboard/storage-stats.js';
import { raiseSystemError } from '../src/run/system-error.js';
import { SingleProcessLock } from '../src/scheduler/leader-lock.js';
import { JobScheduler } from '../src/scheduler/scheduler.js';

// Unexpected failures of background loops raise `system_error` (issue 14/18); here the loops' own failure paths
// with collaborators that throw, no database needed.
function collect(events: EventBus): Array<HoldfastEvents['system_error']> {
  const raised: Array<HoldfastEvents['system_error']> = [];
  events.on('system_error', (payload) => void raised.push(payload));
  return raised;
}

describe('system_error from the engine loops', () => {
  it('the scheduler raises it when reloading jobs fails, once per window for a repeating failure', async () => {
    const events = new EventBus();
    const raised = collect(events);
    const scheduler = new JobScheduler(
      {
        database: {} as DatabasePort as never,
        jobs: () => ({ scheduledJobs: async () => Promise.reject(new Error('catalog table missing')), storageDestinations: async () => [] }) as never,
        settings: () => ({ get: async <T>() => 'UTC' as T }),
        enqueue: () => ({ enqueueRun: async () => ({ id: 'x' }), enqueueScheduledRuns: async () => new Map() }),
        lock: new SingleProcessLock(),
        logger: silentLogger,
        events,
      },
      { reloadIntervalMs: 60_000, leaderRetryMs: 60_000 },
    );
    await scheduler.runCycle();
    await scheduler.runCycle();
    await scheduler.stop();
    await new Promise((resolve) => setImmediate(resolve));
    expect(raised).toEqual([{ message: 'The scheduler could not reload jobs', source: 'scheduler', error: 'catalog table missing' }]);
  });

  it('the storage statistics raise it when a refresh fails as a whole; a refresh can be requested through the bus', async () => {
    const events = new EventBus();
    const raised = collect(events);
    let listed = 0;
    const stats = new StorageStats({} as never, {
      jobs: () =>
        ({
          storageDestinations: async () => {
            listed += 1;
            throw new Error('database is locked');
          },
        }) as never,
      catalog: () => ({}) as never,
      adapters: () => ({}) as never,
      logger: silentLogger,
    });
    stats.start(60 * 60_000, events);
    await events.emit('storage_stats_refresh', { reason: 'test' });
    await stats.stop();
    await new Promise((resolve) => setImmediate(resolve));
    expect(listed).toBeGreaterThanOrEqual(2);
    expect(raised).toEqual([{ message: 'Refreshing the storage statistics failed', source: 'storage-statistics', error: 'database is locked' }]);
  });

  it('each bus (one server) has its own window: one server raising does not silence another', async () => {
    const first = new EventBus();
    const second = new EventBus();
    const raisedFirst = collect(first);
    const raisedSecond = collect(second);
    raiseSystemError(first, 'queue', 'The engine heartbeat failed', new Error('down'));
    raiseSystemError(first, 'queue', 'The engine heartbeat failed', new Error('down'));
    raiseSystemError(second, 'queue', 'The engine heartbeat failed', new Error('down'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(raisedFirst).toHaveLength(1);
    expect(raisedSecond).toEqual([{ message: 'The engine heartbeat failed', source: 'queue', error: 'down' }]);
  });

  it('without a bus nothing is raised and nothing throws', () => {
    expect(() => raiseSystemError(undefined, 'queue', 'x', new Error('y'))).not.toThrow();
  });
});
