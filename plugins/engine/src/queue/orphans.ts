import type { KernelLogger, StorageAdapter } from '@holdfast/kernel';
import type { ExecutionStore } from '../store/execution-store.js';
import { parseMetadata } from '../store/metadata.js';
import { messageOf } from '../run/outcome.js';
import type { RunServices } from '../run/services.js';
import { raiseSystemError } from '../run/system-error.js';
import { INDEX_SIDECAR_EXTENSION } from '../archive/index-sidecar.js';
import { SIDECAR_EXTENSION } from '../run/sidecar.js';
import type { EngineOptions } from './engine-options.js';

/** The log line (and `error`) of a run whose process died. */
export const INTERRUPTED_MESSAGE = 'interrupted: the server stopped while this run was in progress';

/**
 * PostgreSQL: the log line (and `error`) of a run whose process stopped sending heartbeats (it crashed, was killed
 * or lost the database), closed by whichever process noticed first. Starts like {@link INTERRUPTED_MESSAGE}.
 */
export function abandonedMessage(claimedBy: string | null | undefined, staleAfterMs: number): string {
  const owner = claimedBy ? `server process ${claimedBy}` : 'server process running it';
  return `interrupted: the ${owner} stopped (no heartbeat for more than ${Math.round(staleAfterMs / 1000)} s); another server process closed this run`;
}

/**
 * Closes executions left Running by a process that is gone, as Failed with {@link INTERRUPTED_MESSAGE} (PostgreSQL:
 * {@link abandonedMessage}, naming the process), then removes
 * an unfinished object their upload may have left on each destination (see {@link removeTarget}; the puts are
 * atomic, so this only matters when the crash came between a put and its sidecar). `staleBefore` null means "every
 * Running row" (libsql at boot: one process); on PostgreSQL, rows whose heartbeat is older than it. A pass that
 * closed runs raises one `system_error` (source `queue`): a run cut off by a dead process is an unexpected failure
 * of the queue, and without it nobody hears of it (the run's own outcome event died with its process).
 */
export async function reapOrphans(
  store: ExecutionStore,
  services: RunServices,
  staleBefore: Date | null,
  logger: KernelLogger,
  options: EngineOptions,
): Promise<number> {
  const orphans = await store.findOrphans(store.dialect === 'postgresql' ? (staleBefore ?? new Date(Date.now() - options.staleAfterMs)) : staleBefore);
  const closedIds: string[] = [];
  let firstMessage = '';
  for (const row of orphans) {
    const message = store.dialect === 'postgresql' ? abandonedMessage(row.claimedBy, options.staleAfterMs) : INTERRUPTED_MESSAGE;
    if (!(await store.failOrphan(row, message))) continue;
    closedIds.push(row.id);
    firstMessage ||= message;
    const seq = (await store.lastLogSeq(row.id)) + 1;
    await store.appendLogs([{ executionId: row.id, seq, time: new Date().toISOString(), level: 'error', stage: parseMetadata(row.metadata).stage ?? 'unknown', message }]);
    logger.warn({ executionId: row.id, claimedBy: row.claimedBy }, message);
    await removeTarget(services, parseMetadata(row.metadata).target, logger);
  }
  if (closedIds.length > 0) {
    const what = closedIds.length === 1 ? `Execution ${closedIds[0]} crashed` : `${closedIds.length} executions crashed (${closedIds.join(', ')})`;
    raiseSystemError(services.events, 'queue', what, firstMessage);
  }
  return closedIds.length;
}

/**
 * On each destination, removes the temporary objects of the interrupted put (see `StorageAdapter.removeIncomplete`),
 * and the object of the interrupted run unless its sidecar exists: a sidecar is written only
 * after its data object committed, so object + sidecar is a complete, verifiable backup and is kept (nothing lost);
 * an object without a sidecar is the unfinished part and goes (nothing partial left).
 */
async function removeTarget(services: RunServices, target: { key: string; configIds: string[] } | undefined, logger: KernelLogger): Promise<void> {
  if (!target) return;
  for (const configId of target.configIds) {
    try {
      const storage = services.adapters.storage(await services.catalog.resolveAdapterConfig(configId));
      try {
        // Temporary objects of the cut-off put never become a backup; they go whatever happens to the key itself.
        await storage.adapter.removeIncomplete?.(target.key);
        if (await exists(storage.adapter, `${target.key}${SIDECAR_EXTENSION}`)) {
          logger.warn({ configId, key: target.key }, 'kept the complete backup (data and sidecar) of an interrupted run');
          continue;
        }
        await storage.adapter.delete(target.key);
        // A seekable run may have written its index sidecar before it was cut off (it precedes the .meta.json).
        await storage.adapter.delete(`${target.key}${INDEX_SIDECAR_EXTENSION}`);
      } finally {
        await storage.adapter.dispose?.().catch(() => undefined);
      }
    } catch (error) {
      logger.warn({ configId, key: target.key, err: messageOf(error) }, 'could not remove the object of an interrupted run');
    }
  }
}

async function exists(storage: StorageAdapter, key: string): Promise<boolean> {
  try {
    await storage.stat(key);
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === 'NOT_FOUND') return false;
    throw error;
  }
}
