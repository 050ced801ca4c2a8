import { Readable } from 'node:stream';
import { SIDECAR_EXTENSION, type StorageAdapter } from '@holdfast/kernel';
import { z } from 'zod';

// The sidecar format and its reader live in the kernel (shared with the engine); re-exported for this plugin's files.
export { isSidecarKey, readSidecarObject, SIDECAR_EXTENSION, SidecarFormatError } from '@holdfast/kernel';

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
