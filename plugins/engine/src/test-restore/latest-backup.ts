import { SIDECAR_EXTENSION } from '@holdfast/kernel';
import type { StorageInstance } from '../run/adapters.js';
import { messageOf } from '../run/outcome.js';
import { readSidecar, type ReadSidecar } from '../run/sidecar.js';

/** A backup found on a destination with its sidecar. */
export interface FoundBackup {
  storage: StorageInstance;
  key: string;
  sidecar: ReadSidecar;
}

/**
 * The newest backup of `jobId` (by the sidecar's `createdAt`) on the job's destinations; on a tie the destination
 * with the lower priority (the first) wins. Destinations that cannot be listed are reported and skipped.
 */
export async function findLatestBackup(storages: StorageInstance[], jobId: string, signal: AbortSignal, warn: (message: string) => void): Promise<FoundBackup | null> {
  let best: FoundBackup | null = null;
  for (const storage of storages) {
    try {
      const keys: string[] = [];
      const objects = new Set<string>();
      for await (const object of storage.adapter.list('', { signal })) {
        if (object.key.endsWith(SIDECAR_EXTENSION)) keys.push(object.key.slice(0, -SIDECAR_EXTENSION.length));
        else objects.add(object.key);
      }
      for (const key of keys) {
        if (!objects.has(key)) continue;
        const sidecar = await readSidecar(storage.adapter, key, signal).catch(() => null);
        if (!sidecar || sidecar.jobId !== jobId) continue;
        if (!best || Date.parse(sidecar.createdAt) > Date.parse(best.sidecar.createdAt)) best = { storage, key, sidecar };
      }
    } catch (error) {
      if (signal.aborted) throw error;
      warn(`destination ${storage.name} could not be listed: ${messageOf(error)}`);
    }
  }
  return best;
}
