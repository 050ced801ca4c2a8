import type { Readable } from 'node:stream';
import {
  AdapterError,
  TOKENS,
  inject,
  injectable,
  isAbortError,
  type AdapterContext,
  type GetOptions,
  type HealthResult,
  type PutOptions,
  type PutResult,
  type StorageAdapter,
  type StorageObjectInfo,
} from '@holdfast/sdk';
import type { S3StorageConfig } from './config.js';
import { createConnection, type S3Connection } from './internal/client.js';
import { openObject } from './internal/download.js';
import { S3_ORIGIN, aborted, notFound, s3ErrorName, toAdapterError } from './internal/errors.js';
import { probeBucket } from './internal/health.js';
import { listPrefixOf, objectKeyOf, rootPrefixOf } from './internal/keys.js';
import { bucketLockState, deleteAllVersions, describeLock, putLegalHold, retentionFor, type LockRetention } from './internal/object-lock.js';
import { abortIncompleteUploads, listObjects } from './internal/list.js';
import { loadS3Sdk } from './internal/sdk.js';
import { uploadObject } from './internal/upload.js';

const MiB = 1024 * 1024;
const CHECK_TIMEOUT_MS = 9_000;

/** A destination in an S3 bucket (optionally below a key prefix), over one lazily created, reused client. */
@injectable()
export class S3Storage implements StorageAdapter {
  private connection?: S3Connection;
  private readonly rootPrefix: string;

  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: S3StorageConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {
    this.rootPrefix = rootPrefixOf(config.prefix);
  }

  /** The client, built on first use (the constructor must not fail or do I/O; the SDK loads with the first client). */
  private async s3(): Promise<S3Connection> {
    const sdk = await loadS3Sdk();
    this.connection ??= createConnection(sdk, this.config, this.context);
    return this.connection;
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    const place = `bucket ${this.config.bucket}${this.rootPrefix ? ` prefix ${this.rootPrefix}` : ''}`;
    try {
      const connection = await this.s3();
      const signal = AbortSignal.timeout(CHECK_TIMEOUT_MS);
      await probeBucket(connection, this.rootPrefix, signal);
      // Reported for every S3 destination, but only one that asks for a lock may fail on the answer.
      const lock = await bucketLockState(connection, signal).catch((error: unknown) => {
        if (this.config.objectLockMode) throw error;
        return { enabled: 'unknown' as const, reason: 'no answer in time' };
      });
      const base = `${connection.where}: reachable, listing and writing allowed (probe upload created and aborted). ${describeLock(lock)}`;
      if (this.config.objectLockMode && lock.enabled !== true) {
        const fix = lock.enabled === false ? 'Object Lock can only be enabled when a bucket is created: use a bucket created with Object Lock, or unset objectLockMode' : 'grant s3:GetBucketObjectLockConfiguration, or unset objectLockMode';
        return { ok: false, message: `${base}; objectLockMode ${this.config.objectLockMode} needs a bucket with Object Lock enabled (${fix})`, latencyMs: Date.now() - started };
      }
      return { ok: true, message: base, latencyMs: Date.now() - started };
    } catch (error) {
      const where = this.connection?.where ?? place;
      return { ok: false, message: toAdapterError(error, `check of ${where} failed`, this.connection?.secrets).message, latencyMs: Date.now() - started };
    }
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<PutResult> {
    let objectKey: string;
    let connection: S3Connection;
    let lock: LockRetention | undefined;
    try {
      objectKey = objectKeyOf(this.rootPrefix, key);
      // Only backups are locked (the caller says so); sidecars are rewritten later and must stay deletable.
      lock = options.objectLock ? retentionFor(this.config, options.objectLock.retainUntil) : undefined;
      connection = await this.s3();
    } catch (error) {
      body.destroy();
      throw error;
    }
    try {
      const report = await uploadObject(connection, body, {
        bucket: connection.bucket,
        objectKey,
        partSize: this.config.partSizeMiB * MiB,
        maxPartSize: this.config.maxPartSizeMiB * MiB,
        parallelParts: this.config.parallelParts,
        knownSize: options.size,
        storageClass: this.config.storageClass,
        lock,
        signal: options.signal,
        logger: this.context.logger,
      });
      if (lock && report.parts > 1) await this.confirmRetention(connection, objectKey, report.versionId, lock);
      return { key, size: report.bytes };
    } catch (error) {
      body.destroy();
      if (options.signal?.aborted || isAbortError(error)) throw aborted(`put of "${key}"`, error);
      if (lock && ['InvalidArgument', 'InvalidRequest'].includes(s3ErrorName(error) ?? '')) {
        const cause = toAdapterError(error, 'the server said', connection.secrets).message.replace(/^\[[^\]]+\] /, '');
        throw new AdapterError(S3_ORIGIN, 'CONFIG', `put of "${key}" to ${connection.where} failed (nothing was stored): the bucket refused the object lock; objectLockMode is set, so the bucket must have Object Lock enabled (${cause})`, { cause: error });
      }
      throw toAdapterError(error, `put of "${key}" to ${connection.where} failed (nothing was stored)`, connection.secrets);
    }
  }

  async get(key: string, options: GetOptions = {}): Promise<Readable> {
    const objectKey = objectKeyOf(this.rootPrefix, key);
    try {
      return await openObject(await this.s3(), { key, objectKey }, options);
    } catch (error) {
      if (options.signal?.aborted) throw aborted(`read of "${key}"`, error);
      throw toAdapterError(error, `cannot read "${key}"`, this.connection?.secrets);
    }
  }

  async *list(prefix: string, options: { signal?: AbortSignal } = {}): AsyncIterable<StorageObjectInfo> {
    const s3Prefix = listPrefixOf(this.rootPrefix, prefix);
    yield* listObjects(await this.s3(), this.rootPrefix, s3Prefix, options.signal);
  }

  async stat(key: string): Promise<StorageObjectInfo> {
    const objectKey = objectKeyOf(this.rootPrefix, key);
    const connection = await this.s3();
    try {
      const head = await connection.client.send(new connection.sdk.HeadObjectCommand({ Bucket: connection.bucket, Key: objectKey }));
      return { key, size: head.ContentLength ?? 0, modifiedAt: head.LastModified ?? new Date(0) };
    } catch (error) {
      if (s3ErrorName(error) === 'NotFound' || s3ErrorName(error) === 'NoSuchKey') throw notFound(key);
      throw toAdapterError(error, `cannot stat "${key}" in ${connection.where}`, connection.secrets);
    }
  }

  async delete(key: string): Promise<void> {
    const objectKey = objectKeyOf(this.rootPrefix, key);
    const connection = await this.s3();
    if (this.config.objectLockMode) {
      // The bucket is versioned: a plain delete would only hide the backup behind a delete marker.
      try {
        await deleteAllVersions(connection, key, objectKey);
        return;
      } catch (error) {
        throw toAdapterError(error, `cannot delete "${key}" from ${connection.where}`, connection.secrets);
      }
    }
    try {
      // S3 answers 204 for a missing key too, so delete is idempotent without a HEAD first.
      await connection.client.send(new connection.sdk.DeleteObjectCommand({ Bucket: connection.bucket, Key: objectKey }));
    } catch (error) {
      if (s3ErrorName(error) === 'NoSuchKey') return;
      throw toAdapterError(error, `cannot delete "${key}" from ${connection.where}`, connection.secrets);
    }
  }

  /**
   * At save: a config asking for object lock on a bucket that definitely has no Object Lock is refused (CONFIG). An
   * unreachable bucket or an unanswered question passes: the connection test reports those.
   */
  async verifyConfig(options: { signal?: AbortSignal } = {}): Promise<void> {
    if (!this.config.objectLockMode) return;
    let state;
    try {
      const connection = await this.s3();
      state = await bucketLockState(connection, options.signal ?? AbortSignal.timeout(CHECK_TIMEOUT_MS));
    } catch {
      return;
    }
    if (state.enabled === false) {
      throw new AdapterError(
        S3_ORIGIN,
        'CONFIG',
        `objectLockMode ${this.config.objectLockMode}: bucket ${this.config.bucket} does not have Object Lock enabled (it can only be enabled when a bucket is created: use a bucket created with Object Lock, or unset objectLockMode)`,
      );
    }
  }

  /**
   * Sets or removes the legal hold of `key` (SPEC `locked`). Resolves false without a request when this destination
   * is not configured for object lock, so buckets without it keep working unchanged.
   */
  async setLegalHold(key: string, isOn: boolean, options: { signal?: AbortSignal } = {}): Promise<boolean> {
    if (!this.config.objectLockMode) return false;
    const objectKey = objectKeyOf(this.rootPrefix, key);
    const connection = await this.s3();
    try {
      await putLegalHold(connection, objectKey, isOn, options.signal);
      return true;
    } catch (error) {
      if (s3ErrorName(error) === 'NoSuchKey' || s3ErrorName(error) === 'NotFound') throw notFound(key);
      throw toAdapterError(error, `cannot ${isOn ? 'set' : 'remove'} the legal hold of "${key}" in ${connection.where}`, connection.secrets);
    }
  }

  /**
   * Makes sure a multipart object carries its retention: Ceph RGW ignores the lock headers of CreateMultipartUpload,
   * so the retention is set on the completed version. If that fails the version is removed again (a put either
   * stores a locked backup or nothing) and the put fails.
   */
  private async confirmRetention(connection: S3Connection, objectKey: string, versionId: string | undefined, lock: LockRetention): Promise<void> {
    try {
      await connection.client.send(
        new connection.sdk.PutObjectRetentionCommand({ Bucket: connection.bucket, Key: objectKey, VersionId: versionId, Retention: { Mode: lock.mode, RetainUntilDate: lock.retainUntil } }),
      );
    } catch (error) {
      await connection.client.send(new connection.sdk.DeleteObjectCommand({ Bucket: connection.bucket, Key: objectKey, VersionId: versionId })).catch(() => undefined);
      throw error;
    }
  }

  /** Aborts the unfinished multipart uploads of `key` that a crashed put left on the server. */
  async removeIncomplete(key: string): Promise<void> {
    const objectKey = objectKeyOf(this.rootPrefix, key);
    const connection = await this.s3();
    try {
      const count = await abortIncompleteUploads(connection, objectKey);
      if (count > 0) this.context.logger.info({ key, count }, 's3 aborted unfinished multipart uploads');
    } catch (error) {
      throw toAdapterError(error, `cannot remove the unfinished uploads of "${key}" from ${connection.where}`, connection.secrets);
    }
  }

  async dispose(): Promise<void> {
    this.connection?.client.destroy();
    this.connection = undefined;
  }
}
