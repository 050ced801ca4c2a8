import { pickFreeNameAsync, type NamingStrategy } from '@holdfast/kernel';
import { CODEC_EXTENSIONS, type CompressionCodec } from '../codec/index.js';
import type { StorageInstance } from './adapters.js';

/** Extension of an encrypted backup. */
export const ENCRYPTED_EXTENSION = '.enc';

/** The full extension: source's, then the codec's, then `.enc` when encrypted (`.dump.gz.enc`). */
export function backupExtension(sourceExtension: string, codec: CompressionCodec, isEncrypted: boolean): string {
  return `${sourceExtension}${CODEC_EXTENSIONS[codec]}${isEncrypted ? ENCRYPTED_EXTENSION : ''}`;
}

/** Renders the stem from the job's pattern in the system time zone. */
export function renderStem(
  naming: NamingStrategy,
  pattern: string,
  context: { jobName: string; databases: string[]; date: Date; timezone: string; chain?: string },
): string {
  return naming.render(pattern, {
    jobName: context.jobName,
    ...(context.chain ? { chain: context.chain } : {}),
    databaseName: context.databases.length === 1 ? context.databases[0] : undefined,
    date: context.date,
    timezone: context.timezone,
  });
}

/** A name free on every destination: `name.ext`, else `name-1.ext`, ... (the backup or its sidecar existing counts). */
export async function pickBackupKey(
  stem: string,
  extension: string,
  storages: StorageInstance[],
  signal: AbortSignal,
  isReserved: (key: string) => boolean = () => false,
): Promise<string> {
  const exists = async (candidate: string): Promise<boolean> => {
    if (isReserved(candidate)) return true;
    for (const storage of storages) {
      for (const key of [candidate, `${candidate}.meta.json`]) {
        try {
          await storage.adapter.stat(key);
          return true;
        } catch (error) {
          // Only "not found" means free; any other error (no access) must not be read as "free".
          if ((error as { code?: string }).code !== 'NOT_FOUND') throw error;
        }
      }
    }
    return false;
  };
  return pickFreeNameAsync(`${stem}${extension}`, exists, { extension, signal });
}
