import { Readable } from 'node:stream';
import type { StorageAdapter } from '@holdfast/kernel';
import { z } from 'zod';

/** Extension of the metadata sidecar next to every backup (docs/formats/sidecar.md). */
export const SIDECAR_EXTENSION = '.meta.json';
// Sidecars are a few KiB; anything larger is not one (the engine's reader uses the same bound).
const MAX_SIDECAR_BYTES = 256 * 1024;

/** True for keys that are sidecars (metadata, or the index sidecar of a seekable archive), not backups. */
export function isSidecarKey(key: string): boolean {
  return key.endsWith(SIDECAR_EXTENSION) || key.endsWith('.index.json');
}

/** The sidecar fields a listing shows; every field is optional so an older or foreign sidecar still lists. */
const listingFields = z.looseObject({
  createdAt: z.string().optional().catch(undefined),
  sha256: z.string().optional().catch(undefined),
  locked: z.boolean().optional().catch(undefined),
  compression: z.looseObject({ codec: z.string() }).nullable().optional().catch(undefined),
  encryption: z.unknown().optional(),
  databases: z.array(z.string()).optional().catch(undefined),
  jobId: z.string().nullable().optional().catch(undefined),
  jobName: z.string().nullable().optional().catch(undefined),
});

/** What a listing reads from a sidecar. */
export type SidecarFields = z.output<typeof listingFields>;

/**
 * Reads the raw JSON object of `key`'s sidecar; `null` when there is none. Throws naming the file for one that is
 * too large or not a JSON object, and passes access failures through (a listing must not hide them).
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
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new SidecarFormatError(`the sidecar of "${key}" is not a JSON object`);
  return value as Record<string, unknown>;
}

/** A sidecar exists but is not one we can read (as opposed to a storage that cannot be reached). */
export class SidecarFormatError extends Error {
  override readonly name = 'SidecarFormatError';
}

/** The listing fields of a raw sidecar object. */
export function sidecarFields(raw: Record<string, unknown>): SidecarFields {
  return listingFields.parse(raw);
}

/**
 * Rewrites `key`'s sidecar with `locked` set, keeping every other field as it was (unknown, newer fields
 * included). The put is atomic, so a reader sees the old or the new sidecar, never half of one.
 */
export async function writeLockedFlag(storage: StorageAdapter, key: string, raw: Record<string, unknown>, isLocked: boolean, signal?: AbortSignal): Promise<void> {
  const text = `${JSON.stringify({ ...raw, locked: isLocked }, null, 2)}\n`;
  const bytes = Buffer.from(text, 'utf8');
  await storage.put(`${key}${SIDECAR_EXTENSION}`, Readable.from([bytes]), { signal, size: bytes.length });
}
