import type { RetentionCandidate, RetentionStrategy, StorageObjectInfo } from '@holdfast/kernel';
import type { StorageInstance } from './adapters.js';
import { INDEX_SIDECAR_EXTENSION, isAdapterError } from '@holdfast/kernel';
import { isSidecarKey, readSidecar, SIDECAR_EXTENSION, type ReadSidecar } from './sidecar.js';

function chainIdOf(sidecar: ReadSidecar): string | undefined {
  const chain = (sidecar as { archive?: { chain?: { id?: unknown } | null } }).archive?.chain;
  return typeof chain?.id === 'string' ? chain.id : undefined;
}

/** Sidecar reads in flight at once on storages that declare `parallelMetadataReads` (SPEC "Limits"). */
export const PARALLEL_METADATA_READS = 8;

/** One backup with the verdict of the retention strategy. */
export interface RetentionVerdict {
  key: string;
  createdAt: string;
  locked: boolean;
  action: 'keep' | 'prune';
  reason: string;
}

/** Runs `work` over `items` with at most `limit` in flight, keeping the input order in the result. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

/**
 * Lists the job's backups on one destination and asks the strategy what to keep. A backup belongs to the job when
 * its sidecar names the job; files without a sidecar are never touched (nothing proves they are ours). Creation time
 * comes from the sidecar, the modification time only when the recorded one is unreadable; `locked` from the sidecar.
 */
export async function planRetention(
  storage: StorageInstance,
  strategy: RetentionStrategy,
  options: { jobId: string; timezone: string; now?: Date; signal?: AbortSignal },
): Promise<RetentionVerdict[]> {
  const objects: StorageObjectInfo[] = [];
  const keys = new Set<string>();
  for await (const object of storage.adapter.list('', { signal: options.signal })) {
    keys.add(object.key);
    if (!isSidecarKey(object.key)) objects.push(object);
  }
  const withSidecar = objects.filter((object) => keys.has(`${object.key}${SIDECAR_EXTENSION}`));
  const limit = storage.capabilities.parallelMetadataReads ? PARALLEL_METADATA_READS : 1;
  const read = await mapLimit(withSidecar, limit, async (object) => ({ object, sidecar: await readSidecar(storage.adapter, object.key, options.signal) }));
  const candidates: RetentionCandidate[] = [];
  for (const { object, sidecar } of read) {
    if (!sidecar || (sidecar as { jobId?: unknown }).jobId !== options.jobId) continue;
    const recorded = new Date(sidecar.createdAt);
    candidates.push({
      key: object.key,
      createdAt: Number.isNaN(recorded.getTime()) ? object.modifiedAt : recorded,
      locked: sidecar.locked === true,
      // A chain is only restorable whole: retention keeps or deletes its members together.
      ...(chainIdOf(sidecar) ? { chainId: chainIdOf(sidecar) } : {}),
    });
  }
  const decisions = strategy.select(candidates, options.now ?? new Date(), options.timezone);
  const byKey = new Map(candidates.map((candidate) => [candidate.key, candidate]));
  return decisions.map((decision) => {
    const candidate = byKey.get(decision.key);
    // Belt and braces: a locked backup is never pruned, whatever the strategy answered.
    const isLocked = candidate?.locked === true;
    return {
      key: decision.key,
      createdAt: (candidate?.createdAt ?? new Date(0)).toISOString(),
      locked: isLocked,
      action: isLocked ? 'keep' : decision.action,
      reason: isLocked && decision.action === 'prune' ? 'locked' : decision.reason,
    };
  });
}

/**
 * Deletes the pruned backups and their sidecars; returns what was deleted, what the store kept because it is still
 * under an object lock (adapter error LOCKED: kept, with the sidecars, and not a failure) and what failed. Never throws.
 */
export async function applyRetention(
  storage: StorageInstance,
  verdicts: readonly RetentionVerdict[],
  log: { info(message: string): void; error(message: string): void },
): Promise<{ deleted: string[]; locked: string[]; errors: string[] }> {
  const deleted: string[] = [];
  const locked: string[] = [];
  const errors: string[] = [];
  for (const verdict of verdicts) {
    if (verdict.action !== 'prune') continue;
    try {
      await storage.adapter.delete(verdict.key);
      await storage.adapter.delete(`${verdict.key}${SIDECAR_EXTENSION}`);
      // The index sidecar of a seekable archive goes with it (deleting a missing key succeeds).
      await storage.adapter.delete(`${verdict.key}${INDEX_SIDECAR_EXTENSION}`);
      deleted.push(verdict.key);
      log.info(`retention on ${storage.name}: deleted ${verdict.key} (${verdict.reason})`);
    } catch (error) {
      if (isAdapterError(error) && error.code === 'LOCKED') {
        locked.push(verdict.key);
        log.info(`retention on ${storage.name}: kept ${verdict.key}, still under an object lock: ${error.message}`);
        continue;
      }
      const message = `retention on ${storage.name}: could not delete ${verdict.key}: ${(error as Error).message}`;
      errors.push(message);
      log.error(message);
    }
  }
  return { deleted, locked, errors };
}
