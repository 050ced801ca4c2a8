import { AdapterError } from '@holdfast/sdk';
import { S3_ORIGIN, s3ErrorName } from './errors.js';

/** What a HEAD of an archived object tells (both optional: the HEAD may fail or the server may not say). */
export interface ArchiveState {
  storageClass?: string;
  /** The `x-amz-restore` header, e.g. `ongoing-request="true"`. */
  restore?: string;
}

/** True when S3 refused a read because the object sits in an archive class and is not restored (403 InvalidObjectState). */
export function isArchivedObjectError(error: unknown): boolean {
  return s3ErrorName(error) === 'InvalidObjectState';
}

/**
 * The descriptive error for a read of an archived (GLACIER / DEEP_ARCHIVE, not restored) object: what happened, and
 * how to restore it. Never an empty or broken stream: the caller throws this instead of returning a body.
 */
export function archivedObjectError(location: { bucket: string; objectKey: string; key: string }, state: ArchiveState, cause?: unknown): AdapterError {
  const storageClass = state.storageClass ?? (cause as { StorageClass?: string } | undefined)?.StorageClass ?? 'an archive storage class';
  const duration = storageClass === 'DEEP_ARCHIVE' ? 'up to 48 hours (12 hours with the Standard tier)' : 'minutes to 12 hours depending on the retrieval tier';
  const isRestoring = /ongoing-request="true"/.test(state.restore ?? '');
  const progress = isRestoring
    ? 'A restore of it is already in progress; retry when it has finished.'
    : `Start a restore first, e.g. "aws s3api restore-object --bucket ${location.bucket} --key ${location.objectKey} --restore-request Days=7,GlacierJobParameters={Tier=Standard}" or "Initiate restore" in the provider's console, wait until it completes (${duration}), then read it again within the restore period.`;
  return new AdapterError(
    S3_ORIGIN,
    'CONFIG',
    `object "${location.key}" is archived in storage class ${storageClass} and cannot be read until it is restored. ${progress}`,
    { cause },
  );
}
