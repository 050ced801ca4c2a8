import { AdapterError, objectLockRetainUntil } from '@holdfast/sdk';
import type { S3StorageConfig } from '../config.js';
import type { S3Connection } from './client.js';
import { S3_ORIGIN, s3ErrorName, toAdapterError } from './errors.js';

/** The retention an upload is written with: S3's mode and the date until which nobody may delete it. */
export interface LockRetention {
  mode: 'GOVERNANCE' | 'COMPLIANCE';
  retainUntil: Date;
}

/**
 * The retention of a new backup, or undefined when the destination does not use object lock. `policyEnd` is the
 * earliest moment the job's retention policy may delete the backup (from the engine); the margin is added to it so
 * retention never meets a lock it caused itself. Without a policy end the configured period applies (no margin:
 * the period is already the whole answer). A date not in the future is refused before anything is written.
 */
export function retentionFor(config: S3StorageConfig, policyEnd: Date | undefined, now = new Date()): LockRetention | undefined {
  if (!config.objectLockMode) return undefined;
  const retainUntil = objectLockRetainUntil(policyEnd, config, now);
  if (Number.isNaN(retainUntil.getTime()) || retainUntil.getTime() <= now.getTime()) {
    throw new AdapterError(S3_ORIGIN, 'CONFIG', `the retain-until date ${Number.isNaN(retainUntil.getTime()) ? 'given' : retainUntil.toISOString()} is not in the future; nothing was stored`);
  }
  return { mode: config.objectLockMode, retainUntil };
}

/** What the bucket says about Object Lock: enabled or not, and its default retention rule if it has one. */
export interface BucketLockState {
  /** `unknown` when the server does not answer the question (not implemented, or not allowed). */
  enabled: boolean | 'unknown';
  defaultRetention?: string;
  /** Why the state is unknown. */
  reason?: string;
}

/** GetObjectLockConfiguration, read as a state; never throws for "no lock" answers. */
export async function bucketLockState(connection: S3Connection, signal: AbortSignal): Promise<BucketLockState> {
  try {
    const answer = await connection.client.send(new connection.sdk.GetObjectLockConfigurationCommand({ Bucket: connection.bucket }), { abortSignal: signal });
    const configuration = answer.ObjectLockConfiguration;
    if (configuration?.ObjectLockEnabled !== 'Enabled') return { enabled: false };
    const rule = configuration.Rule?.DefaultRetention;
    if (!rule?.Mode) return { enabled: true };
    const period = rule.Days ? `${rule.Days} day(s)` : `${rule.Years ?? 0} year(s)`;
    return { enabled: true, defaultRetention: `${rule.Mode} ${period}` };
  } catch (error) {
    const name = s3ErrorName(error);
    if (name === 'ObjectLockConfigurationNotFoundError') return { enabled: false };
    if (signal.aborted) throw error;
    return { enabled: 'unknown', reason: toAdapterError(error, 'GetObjectLockConfiguration', connection.secrets).message.replace(/^\[[^\]]+\] /, '') };
  }
}

/** One sentence for the connection test about the bucket's Object Lock. */
export function describeLock(state: BucketLockState): string {
  if (state.enabled === 'unknown') return `Object Lock: unknown (${state.reason ?? 'no answer'})`;
  if (!state.enabled) return 'Object Lock: not enabled on the bucket';
  return `Object Lock: enabled, default retention ${state.defaultRetention ?? 'none'}`;
}

/** The error of an object the store will not delete yet: names the date (or the legal hold) and what to do. */
export function lockedError(key: string, lock: { retainUntil?: Date; mode?: string; legalHold: boolean }): AdapterError {
  const reasons: string[] = [];
  if (lock.retainUntil && lock.retainUntil.getTime() > Date.now()) reasons.push(`locked until ${lock.retainUntil.toISOString()} (${lock.mode ?? 'retention'} mode)`);
  if (lock.legalHold) reasons.push('under a legal hold (unlock the backup to remove it)');
  const why = reasons.length > 0 ? reasons.join(' and ') : 'protected by an object lock';
  return new AdapterError(S3_ORIGIN, 'LOCKED', `"${key}" is ${why}; the bucket refuses to delete it before then`);
}

/** The lock of one object version as S3 reports it. */
export async function lockOf(connection: S3Connection, objectKey: string, versionId: string | undefined): Promise<{ retainUntil?: Date; mode?: string; legalHold: boolean }> {
  const head = await connection.client.send(new connection.sdk.HeadObjectCommand({ Bucket: connection.bucket, Key: objectKey, VersionId: versionId }));
  return { retainUntil: head.ObjectLockRetainUntilDate, mode: head.ObjectLockMode, legalHold: head.ObjectLockLegalHoldStatus === 'ON' };
}

/**
 * Deletes every version (and delete marker) of `objectKey`, so a backup retention removed really frees its space
 * on a versioned, object-locked bucket (a plain DeleteObject there only adds a delete marker). A version the bucket
 * refuses to delete because of its lock ends the delete with a LOCKED error naming the date; nothing after it is
 * touched. Versions are listed newest first, so the current object is the first one tried.
 */
export async function deleteAllVersions(connection: S3Connection, key: string, objectKey: string): Promise<void> {
  const { client, sdk, bucket } = connection;
  let KeyMarker: string | undefined;
  let VersionIdMarker: string | undefined;
  const versions: Array<{ versionId?: string; isDeleteMarker: boolean }> = [];
  do {
    const page = await client.send(new sdk.ListObjectVersionsCommand({ Bucket: bucket, Prefix: objectKey, KeyMarker, VersionIdMarker }));
    for (const version of page.Versions ?? []) if (version.Key === objectKey) versions.push({ versionId: version.VersionId, isDeleteMarker: false });
    for (const marker of page.DeleteMarkers ?? []) if (marker.Key === objectKey) versions.push({ versionId: marker.VersionId, isDeleteMarker: true });
    KeyMarker = page.IsTruncated ? page.NextKeyMarker : undefined;
    VersionIdMarker = page.IsTruncated ? page.NextVersionIdMarker : undefined;
  } while (KeyMarker);
  // Real versions first: while one is locked, the delete markers stay and the object keeps its listing state.
  versions.sort((a, b) => Number(a.isDeleteMarker) - Number(b.isDeleteMarker));
  for (const version of versions) {
    try {
      await client.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: objectKey, VersionId: version.versionId }));
    } catch (error) {
      if (s3ErrorName(error) === 'NoSuchKey' || s3ErrorName(error) === 'NoSuchVersion') continue;
      if (!version.isDeleteMarker && (s3ErrorName(error) === 'AccessDenied' || s3ErrorName(error) === 'Forbidden')) {
        const lock = await lockOf(connection, objectKey, version.versionId).catch(() => undefined);
        if (lock && (lock.legalHold || (lock.retainUntil && lock.retainUntil.getTime() > Date.now()))) throw lockedError(key, lock);
      }
      throw error;
    }
  }
}

/** Sets (ON) or removes (OFF) the legal hold of the current version of `objectKey`. */
export async function putLegalHold(connection: S3Connection, objectKey: string, isOn: boolean, signal?: AbortSignal): Promise<void> {
  await connection.client.send(
    new connection.sdk.PutObjectLegalHoldCommand({ Bucket: connection.bucket, Key: objectKey, LegalHold: { Status: isOn ? 'ON' : 'OFF' } }),
    { abortSignal: signal },
  );
}
