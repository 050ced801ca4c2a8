import type { StorageInstance } from '../run/adapters.js';
import { messageOf } from '../run/outcome.js';
import { checkStoredObject } from '../verify/stored-object.js';

/** The stored file a failed restore read. */
export interface RestoredFile {
  storage: StorageInstance;
  key: string;
  sha256: string;
  /** The profile key of an HFENC-encrypted backup (its chunks are authenticated too). */
  encryptionKey?: Buffer | null;
}

/**
 * A restore fed a corrupted backup may stop on whatever the bad bytes break first (a decompressor, the database's
 * own parser) before the SHA-256 gate at the end of the stream can speak. So when the restore fails for any reason
 * other than the gate or chunk authentication, the stored file is re-read and hashed: a corrupted backup is then
 * named as such, with the restore's own error kept for context. Always throws.
 */
export async function explainRestoreFailure(file: RestoredFile, error: unknown, signal: AbortSignal): Promise<never> {
  const message = messageOf(error);
  if (signal.aborted || /checksum mismatch|failed authentication/.test(message)) throw error;
  const check = await checkStoredObject(file.storage, file.key, { expectedSha256: file.sha256, encryptionKey: file.encryptionKey ?? null, signal });
  if (check.ok) throw error;
  throw new Error(`the backup file is corrupted: ${check.problem} (the restore stopped with: ${message})`);
}
