import type { IntegrityCheckOutcome, IntegrityChecks } from '@holdfast/kernel';
import type { Engine } from '../queue/engine.js';
import type { ExecutionStore } from '../store/execution-store.js';
import { parseMetadata } from '../store/metadata.js';

/** Trigger of runs started through the port when the caller names none: the system task, as the scheduler. */
const TASK_TRIGGER = { type: 'Scheduler', label: 'Integrity check task' } as const;

/**
 * `TOKENS.IntegrityChecks`: queues integrity checks for the observability plugin's system task and reads their
 * outcome back from the execution row (the run may be claimed by any process, so there is no promise to await).
 */
export function integrityChecksPort(engine: () => Engine, store: () => ExecutionStore): IntegrityChecks {
  return {
    start: async (request, trigger) => ({ executionId: (await engine().enqueueIntegrityCheck(request, trigger ?? TASK_TRIGGER)).id }),
    async outcome(executionId) {
      const row = await store().get(executionId);
      if (!row || row.type !== 'IntegrityCheck') return null;
      const integrity = parseMetadata(row.metadata).integrity;
      return {
        executionId,
        status: row.status as IntegrityCheckOutcome['status'],
        checked: integrity?.checked ?? 0,
        bytes: integrity?.bytes ?? 0,
        problemCount: integrity?.problemCount ?? integrity?.problems.length ?? 0,
        complete: integrity?.complete ?? false,
        error: row.error ?? null,
      };
    },
  };
}
