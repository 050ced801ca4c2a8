import { CODEC_EXTENSIONS, type CompressionCodec } from '../codec/index.js';
import { ENCRYPTED_EXTENSION } from '../run/file-name.js';
import { timelineHex } from './log-naming.js';

/**
 * Where a job's change log lives on each destination. Backups are named by the job's naming pattern at the root
 * (patterns cannot hold a folder), so the log gets a folder of its own per job, named by the job id, which survives a
 * rename: `pitr/<job id>`.
 */
export function changeLogFolder(jobId: string): string {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(jobId) || jobId.startsWith('.')) throw new Error(`job id "${jobId}" cannot name a storage folder`);
  return `pitr/${jobId}`;
}

/**
 * True for objects of an archived change log. They are not backups: storage statistics count their bytes but neither
 * count them as backups nor take their (seconds-old) times as the newest backup, which would hide a failing schedule.
 */
export function isChangeLogKey(key: string): boolean {
  return key.startsWith('pitr/');
}

/** Suffix of a partial segment (PostgreSQL's own word for the segment being written). */
export const PARTIAL_SUFFIX = '.partial';

/**
 * `pitr/<job>/wal/<timeline, 8 hex>/<segment>[.partial]<codec extension>[.enc]`: the codec and encryption extensions
 * are the ones backups get, so a stored segment says how to open it.
 */
export function segmentKey(input: { jobId: string; timeline: number; name: string; partial: boolean; codec: CompressionCodec; isEncrypted: boolean }): string {
  if (!/^[A-Za-z0-9._-]{1,128}$/.test(input.name) || input.name.startsWith('.')) throw new Error(`"${input.name}" is not a change-log segment name`);
  const extension = `${input.partial ? PARTIAL_SUFFIX : ''}${CODEC_EXTENSIONS[input.codec]}${input.isEncrypted ? ENCRYPTED_EXTENSION : ''}`;
  return `${changeLogFolder(input.jobId)}/wal/${timelineHex(input.timeline)}/${input.name}${extension}`;
}
