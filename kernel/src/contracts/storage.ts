import type { Readable } from 'node:stream';
import type { HealthResult } from '../adapter-context.js';

/** What a storage destination declares it can do; the kernel and the testkit read these, never probe methods. */
export interface StorageCapabilities {
  /** `get` honours `range`. */
  rangeReads: boolean;
  /** The server computes a checksum we can compare with ours. */
  serverChecksum: boolean;
  /** Sidecars may be read concurrently (retention reads up to 8 at a time). */
  parallelMetadataReads: boolean;
  /** Symbolic links can be recreated on restore from this destination. */
  symlinks: boolean;
  /** Parallel upload parts the adapter may use (1 for stream-only protocols). */
  maxParallelParts: number;
  /**
   * The destination is a path on the Holdfast server's own disk, so only the server reaches it: a remote agent
   * cannot upload to it directly (it would write to its own disk). Absent means false.
   */
  serverDiskOnly?: boolean;
}

/** One stored object. Keys use `/` separators, relative to the destination root. */
export interface StorageObjectInfo {
  key: string;
  size: number;
  modifiedAt: Date;
}

/** Options of {@link StorageAdapter.put}. */
export interface PutOptions {
  signal?: AbortSignal;
  /** Known size in bytes, when the caller has it (helps multipart sizing). */
  size?: number;
  /**
   * This object is a backup: write it under the destination's object lock, if it has one (the store then refuses
   * to delete it before the date). `retainUntil` is the first moment the job's retention policy may prune it;
   * absent, the destination's own default period applies. Only adapters implementing
   * {@link StorageAdapter.setLegalHold} honour it, and only when configured for object lock; every other adapter
   * ignores it. The engine passes it for backups, never for sidecars, which Holdfast rewrites.
   */
  objectLock?: { retainUntil?: Date };
}

/** Result of a completed put. */
export interface PutResult {
  key: string;
  size: number;
}

/** Inclusive byte range, as in HTTP `Range: bytes=start-end`; `end` omitted reads to the end. */
export interface ByteRange {
  start: number;
  end?: number;
}

/** Options of {@link StorageAdapter.get}. */
export interface GetOptions {
  signal?: AbortSignal;
  range?: ByteRange;
}

/**
 * A storage destination. `put` is atomic: a failed or aborted put leaves no visible object. `list` throws on an
 * access failure, never yields an empty listing instead. `delete` of a missing key succeeds. `get` and `stat`
 * of a missing key throw `AdapterError` with code `NOT_FOUND`.
 */
export interface StorageAdapter {
  check(): Promise<HealthResult>;
  put(key: string, body: Readable, options?: PutOptions): Promise<PutResult>;
  get(key: string, options?: GetOptions): Promise<Readable>;
  list(prefix: string, options?: { signal?: AbortSignal }): AsyncIterable<StorageObjectInfo>;
  stat(key: string): Promise<StorageObjectInfo>;
  delete(key: string): Promise<void>;
  /**
   * Removes what an interrupted `put` of `key` may have left (temporary files, unfinished multipart uploads). The
   * engine calls it at start-up for runs a crash cut off, when no put of that key can be in flight. Destinations
   * whose puts leave nothing behind omit it.
   */
  removeIncomplete?(key: string): Promise<void>;
  /**
   * The checksum the server keeps for `key` as lowercase hex, or `null` when it has none for this object (for
   * example a multipart upload). Only destinations declaring `serverChecksum` implement it; post-upload
   * verification uses it instead of reading the object back.
   */
  checksum?(key: string, algorithm: 'sha256' | 'md5', options?: { signal?: AbortSignal }): Promise<string | null>;
  /**
   * Object lock (immutable storage), optional: sets or removes a legal hold on `key`, which blocks its deletion
   * until removed. Resolves `false` (and changes nothing) when this destination is not configured for object lock.
   * A `delete` refused by a lock throws `AdapterError` code `LOCKED` whose message names the date or the hold.
   */
  setLegalHold?(key: string, isOn: boolean, options?: { signal?: AbortSignal }): Promise<boolean>;
  /**
   * Optional, called when a configuration is saved: checks with cheap read-only requests that the remote end supports
   * what the config asks for (S3: Object Lock on the bucket when the config asks for a lock). Throws `AdapterError`
   * code `CONFIG` naming the problem only when the answer is definite; resolves when nothing needs checking or the
   * remote end cannot be asked right now (an unreachable destination may still be saved; its check reports it).
   */
  verifyConfig?(options?: { signal?: AbortSignal }): Promise<void>;
  /** Release connections; called on shutdown or when the config changes. */
  dispose?(): Promise<void>;
}
