import { resolveSnapshot, type RangeReader, type Snapshot } from '@holdfast/archive';
import type { StorageInstance } from '../run/adapters.js';
import { createArchiveRangeReader } from './range-reader.js';
import { readIndexSidecar } from './index-sidecar.js';

/** A resolved snapshot of a stored archive (and its chain), with range readers into each archive of the chain. */
export interface LoadedSnapshot {
  snapshot: Snapshot;
  rangeReaderFor(archiveName: string): RangeReader;
}

/**
 * Reads the index sidecars of `key` and of every earlier archive its chain names, from one destination, and
 * resolves the snapshot (a missing or inconsistent member fails with the chain error naming it).
 */
export async function loadSnapshot(storage: StorageInstance, key: string, encryptionKey: Buffer | null, signal?: AbortSignal): Promise<LoadedSnapshot> {
  const latest = await readIndexSidecar(storage.adapter, key, encryptionKey, signal).catch((error: unknown) => {
    throw new Error(`the index sidecar of "${key}" cannot be read: ${(error as Error).message}`, { cause: error });
  });
  const bases = latest.chain?.baseArchives ?? [];
  const earlier = [];
  for (const base of bases) {
    earlier.push(
      await readIndexSidecar(storage.adapter, base, encryptionKey, signal).catch((error: unknown) => {
        throw new Error(`"${key}" is part of an incremental chain, and its earlier backup "${base}" cannot be read: ${(error as Error).message}`, { cause: error });
      }),
    );
  }
  // The indexes were read for this call alone, so the snapshot may take the newest one's entries without copying.
  const snapshot = resolveSnapshot([...earlier, { ...latest, archiveName: latest.archiveName ?? key }], { reuseEntries: true });
  const readers = new Map<string, RangeReader>();
  return {
    snapshot,
    rangeReaderFor(archiveName) {
      let reader = readers.get(archiveName);
      if (!reader) {
        const sized = storage.adapter.stat(archiveName);
        sized.catch(() => undefined);
        const lazy = sized.then((info) =>
          createArchiveRangeReader({ storage: storage.adapter, canRangeRead: storage.capabilities.rangeReads, key: archiveName, storedSize: info.size, encryptionKey, signal }),
        );
        reader = async (start, end) => (await lazy).read(start, end);
        readers.set(archiveName, reader);
      }
      return reader;
    },
  };
}
