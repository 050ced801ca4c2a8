import type { IntegrityCheckOutcome, IntegrityChecks } from '@holdfast/kernel';
import type { IntegrityCheckSettings } from '../settings.js';

/** Name of the task (beyond SPEC's list, like CONFIG_BACKUP). */
export const INTEGRITY_CHECK_TASK = 'INTEGRITY_CHECK';

/** What the integrity check task needs. */
export interface IntegrityTaskDeps {
  /** The engine's port; undefined when no engine plugin is composed. */
  port: () => IntegrityChecks | undefined;
  settings: () => Promise<IntegrityCheckSettings>;
  /** How often the queued run's outcome is read back while waiting for it. */
  pollMs: number;
}

const ENDED: ReadonlyArray<IntegrityCheckOutcome['status']> = ['Success', 'Partial', 'Failed', 'Cancelled'];

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

function summary(outcome: IntegrityCheckOutcome, budget: number | null): string {
  const found = outcome.problemCount > 0 ? `${outcome.problemCount} problem(s), integrity_check_failed raised` : 'no problems';
  const coverage = outcome.complete ? 'reached the end of the backups' : `byte budget of ${budget} bytes reached; the next run continues after the last backup checked`;
  return `integrity check ${outcome.executionId} ended ${outcome.status}: ${outcome.checked} backup(s) checked, ${outcome.bytes} bytes read, ${found}; ${coverage}`;
}

/**
 * One run of `INTEGRITY_CHECK`: queues an integrity check of every destination within the configured byte budget
 * through the engine's port and waits for it to end, so the task's lease spans the whole check (two runs never
 * overlap, and the next one starts after the cursor this one left). Problems found are the check's own outcome
 * (Partial, with the integrity notification), not a task failure; a check that could not run (Failed, Cancelled)
 * fails the task.
 */
export async function runIntegrityTask(deps: IntegrityTaskDeps, signal: AbortSignal, trigger: 'Scheduler' | 'Manual'): Promise<string> {
  const port = deps.port();
  if (!port) throw new Error('no integrity check service is running (engine plugin)');
  const { byteBudget } = await deps.settings();
  const { executionId } = await port.start({ byteBudget }, { type: trigger, label: `${INTEGRITY_CHECK_TASK} system task` });
  for (;;) {
    const outcome = await port.outcome(executionId);
    if (!outcome) throw new Error(`integrity check ${executionId} disappeared from the execution history`);
    if (ENDED.includes(outcome.status)) {
      if (outcome.status === 'Failed' || outcome.status === 'Cancelled') {
        throw new Error(`integrity check ${executionId} ended ${outcome.status}${outcome.error ? `: ${outcome.error}` : ''}`);
      }
      return summary(outcome, byteBudget);
    }
    if (signal.aborted) throw new Error(`stopped waiting for integrity check ${executionId} (shutting down); the check itself goes on in the engine`);
    await pause(deps.pollMs, signal);
  }
}
