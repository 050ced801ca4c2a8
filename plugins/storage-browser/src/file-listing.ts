import type { KernelLogger } from '@holdfast/kernel';
import type { OpenStorage } from './storage-access.js';
import { isSidecarKey, readSidecarObject, SIDECAR_EXTENSION, SidecarFormatError, sidecarFields } from './sidecar-file.js';

/** Sidecar reads in flight at once on destinations that allow parallel metadata reads (SPEC "Limits"). */
const PARALLEL_SIDECAR_READS = 8;

/** One backup file as `GET /api/storage/:id/files` shows it. */
export interface FileEntry {
  path: string;
  size: number;
  modifiedAt: string;
  /** The creation time the sidecar records; `null` without a sidecar. */
  createdAt: string | null;
  locked: boolean;
  jobId: string | null;
  jobName: string | null;
  sha256: string | null;
  encrypted: boolean;
  compression: string | null;
  databases: string[];
}

async function mapLimit<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Lists the backups of a destination with their sidecar facts, newest first (recorded creation time, else the
 * modification time). Sidecars themselves are not entries. Access failures propagate; a sidecar that cannot be
 * parsed only loses its facts (logged), so one damaged file does not hide the others.
 */
export async function listFiles(storage: OpenStorage, logger: KernelLogger, signal?: AbortSignal): Promise<FileEntry[]> {
  const objects = [];
  const sidecars = new Set<string>();
  for await (const object of storage.adapter.list('', { signal })) {
    if (object.key.endsWith(SIDECAR_EXTENSION)) sidecars.add(object.key.slice(0, -SIDECAR_EXTENSION.length));
    if (!isSidecarKey(object.key)) objects.push(object);
  }
  const parallel = storage.capabilities.parallelMetadataReads ? PARALLEL_SIDECAR_READS : 1;
  const entries = await mapLimit(objects, parallel, async (object): Promise<FileEntry> => {
    let raw: Record<string, unknown> | null = null;
    if (sidecars.has(object.key)) {
      try {
        raw = await readSidecarObject(storage.adapter, object.key, signal);
      } catch (error) {
        if (!(error instanceof SidecarFormatError)) throw error;
        logger.warn({ err: error, storage: storage.configId }, 'listing: unreadable sidecar ignored');
      }
    }
    const fields = raw ? sidecarFields(raw) : null;
    return {
      path: object.key,
      size: object.size,
      modifiedAt: object.modifiedAt.toISOString(),
      createdAt: fields?.createdAt ?? null,
      locked: fields?.locked ?? false,
      jobId: fields?.jobId ?? null,
      jobName: fields?.jobName ?? null,
      sha256: fields?.sha256 ?? null,
      encrypted: fields ? fields.encryption !== undefined && fields.encryption !== null : object.key.endsWith('.enc'),
      compression: fields?.compression?.codec ?? null,
      databases: fields?.databases ?? [],
    };
  });
  const timeOf = (entry: FileEntry) => Date.parse(entry.createdAt ?? entry.modifiedAt) || 0;
  return entries.sort((a, b) => timeOf(b) - timeOf(a) || a.path.localeCompare(b.path));
}
