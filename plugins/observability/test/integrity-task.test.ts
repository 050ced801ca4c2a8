// The INTEGRITY_CHECK task's handler on its own. The engine is not composed here: `TOKENS.IntegrityChecks` is a test
// double of Holdfast's own port (kernel `IntegrityChecks`) that records the request and plays back execution states.
// The real port, engine and budget cursor are exercised in apps/server/test/integrity-task.test.ts.
import type { IntegrityCheckOutcome, IntegrityCheckRequest, IntegrityChecks } from '@holdfast/kernel';
import { describe, expect, it } from 'vitest';
import { runIntegrityTask } from '../src/index.js';

/** A port double: each `outcome` call answers the next state; the last one repeats. */
function portDouble(states: Array<Partial<IntegrityCheckOutcome>>) {
  const started: Array<{ request: IntegrityCheckRequest; trigger: unknown }> = [];
  let reads = 0;
  const port: IntegrityChecks = {
    async start(request, trigger) {
      started.push({ request, trigger });
      return { executionId: 'exec-1' };
    },
    async outcome(executionId) {
      const state = states[Math.min(reads++, states.length - 1)]!;
      return { executionId, status: 'Running', checked: 0, bytes: 0, problemCount: 0, complete: false, error: null, ...state };
    },
  };
  return { port, started, reads: () => reads };
}

const settings = (byteBudget: number | null) => async () => ({ enabled: true, schedule: '0 5 * * *', byteBudget });

describe('INTEGRITY_CHECK task handler', () => {
  it('queues a check of everything with the configured budget, waits for its end and summarises it', async () => {
    const double = portDouble([{ status: 'Pending' }, { status: 'Running', checked: 1 }, { status: 'Partial', checked: 4, bytes: 1234, problemCount: 2, complete: false }]);
    const message = await runIntegrityTask({ port: () => double.port, settings: settings(5000), pollMs: 5 }, new AbortController().signal, 'Scheduler');
    expect(double.started).toEqual([{ request: { byteBudget: 5000 }, trigger: { type: 'Scheduler', label: 'INTEGRITY_CHECK system task' } }]);
    expect(double.reads()).toBe(3);
    expect(message).toBe(
      'integrity check exec-1 ended Partial: 4 backup(s) checked, 1234 bytes read, 2 problem(s), integrity_check_failed raised; byte budget of 5000 bytes reached; the next run continues after the last backup checked',
    );
  });

  it('a run-now passes the Manual trigger; a complete run says it reached the end', async () => {
    const double = portDouble([{ status: 'Success', checked: 3, bytes: 10, complete: true }]);
    const message = await runIntegrityTask({ port: () => double.port, settings: settings(null), pollMs: 5 }, new AbortController().signal, 'Manual');
    expect(double.started[0]).toEqual({ request: { byteBudget: null }, trigger: { type: 'Manual', label: 'INTEGRITY_CHECK system task' } });
    expect(message).toBe('integrity check exec-1 ended Success: 3 backup(s) checked, 10 bytes read, no problems; reached the end of the backups');
  });

  it('a check that could not run fails the task with its error; no engine fails it clearly', async () => {
    const failed = portDouble([{ status: 'Failed', error: '01-initialize failed: storage unreachable' }]);
    await expect(runIntegrityTask({ port: () => failed.port, settings: settings(1), pollMs: 5 }, new AbortController().signal, 'Scheduler')).rejects.toThrow(
      'integrity check exec-1 ended Failed: 01-initialize failed: storage unreachable',
    );
    const cancelled = portDouble([{ status: 'Cancelled' }]);
    await expect(runIntegrityTask({ port: () => cancelled.port, settings: settings(1), pollMs: 5 }, new AbortController().signal, 'Scheduler')).rejects.toThrow('integrity check exec-1 ended Cancelled');
    await expect(runIntegrityTask({ port: () => undefined, settings: settings(1), pollMs: 5 }, new AbortController().signal, 'Scheduler')).rejects.toThrow(
      'no integrity check service is running (engine plugin)',
    );
  });

  it('stops waiting when the runner stops (shutdown), naming the check that goes on', async () => {
    const double = portDouble([{ status: 'Running' }]);
    const controller = new AbortController();
    const waiting = runIntegrityTask({ port: () => double.port, settings: settings(1), pollMs: 60_000 }, controller.signal, 'Scheduler');
    setTimeout(() => controller.abort(), 20);
    await expect(waiting).rejects.toThrow('stopped waiting for integrity check exec-1 (shutting down); the check itself goes on in the engine');
  });
});
