import { cancellationOf, messageOf, type RunOutcome } from '../run/outcome.js';
import type { RunContext } from '../run/run-context.js';
import type { TestRestoreMetadata } from '../store/metadata.js';

// How every kind of test restore (a backup into a scratch target, a point-in-time cluster or MySQL databases) ends:
// the checks logged one by one and judged together, a failure or a cancel logged the same way.

/** Records the measured restore time, logs each check, and throws naming every failed check. */
export function concludeChecks(ctx: RunContext, record: TestRestoreMetadata, startedAt: number): void {
  record.durationMs = Date.now() - startedAt;
  for (const check of record.checks) (check.ok ? ctx.log.info : ctx.log.error).call(ctx.log, `check ${check.name}: ${check.ok ? 'ok' : 'FAILED'} (${check.detail})`);
  const failed = record.checks.filter((check) => !check.ok);
  if (failed.length > 0) throw new Error(`test restore checks failed: ${failed.map((check) => `${check.name} (${check.detail})`).join('; ')}`);
  ctx.log.info(`test restore passed in ${record.durationMs} ms (measured restore time)`);
}

/** The outcome of a test restore that threw: Cancelled when the run was cancelled, else Failed with the reason logged. */
export function unsuccessfulTestRestore(ctx: RunContext, error: unknown, path: string | null): RunOutcome {
  const cancelled = cancellationOf(ctx.signal);
  if (cancelled) ctx.log.warn(`cancelled: ${cancelled.message}`);
  else ctx.log.error(`test restore failed: ${messageOf(error)}`);
  return { status: cancelled ? 'Cancelled' : 'Failed', path };
}
