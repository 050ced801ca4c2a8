import type { Readable } from 'node:stream';
import type { StorageAdapter } from './contracts/storage.js';

/** Extension of the metadata sidecar written next to every backup (docs/formats/sidecar.md). */
export const SIDECAR_EXTENSION = '.meta.json';

/** Extension of the index sidecar of a seekable archive. */
export const INDEX_SIDECAR_EXTENSION = '.index.json';

/** True for keys that are sidecars (metadata, or the index sidecar of a seekable archive), not backups. */
export function isSidecarKey(key: string): boolean {
  return key.endsWith(SIDECAR_EXTENSION) || key.endsWith(INDEX_SIDECAR_EXTENSION);
}

/** Readers refuse larger sidecars: a real one is a few KiB. */
export const MAX_SIDECAR_BYTES = 256 * 1024;

/** A sidecar exists but cannot be read as one (too large, not JSON, not an object); distinct from an access failure. */
export class SidecarFormatError extends Error {
  override readonly name = 'SidecarFormatError';
}

/**
 * Reads the raw JSON object of `key`'s sidecar: `null` when there is none (`NOT_FOUND`). Throws
 * {@link SidecarFormatError} naming the file for one that is too large or not a JSON object, and passes other
 * storage errors through, so a caller never mistakes an unreachable storage for a missing sidecar.
 */
export async function readSidecarObject(storage: StorageAdapter, key: string, signal?: AbortSignal): Promise<Record<string, unknown> | null> {
  let stream: Readable;
  try {
    stream = await storage.get(`${key}${SIDECAR_EXTENSION}`, { signal });
  } catch (error) {
    if ((error as { code?: string }).code === 'NOT_FOUND') return null;
    throw error;
  }
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of stream) {
    length += (chunk as Buffer).length;
    if (length > MAX_SIDECAR_BYTES) {
      stream.destroy();
      throw new SidecarFormatError(`the sidecar of "${key}" is larger than ${MAX_SIDECAR_BYTES} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  let value: unknown;
  try {
    value = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new SidecarFormatError(`the sidecar of "${key}" is not valid JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SidecarFormatError(`the sidecar of "${key}" is not a JSON object`);
  }
  return value as Record<string, unknown>;
}
