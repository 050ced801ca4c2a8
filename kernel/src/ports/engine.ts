import type { Readable } from 'node:stream';

/** Ports the engine plugin implements (recovery kits, reading stored backups), registered under the matching TOKENS. */

/** One file of an encryption profile's recovery kit. */
export interface RecoveryKitFile {
  name: string;
  content: string;
  mode?: number;
}

/** Builds the recovery kit files (standalone decrypt script, README, key file) for one profile key (engine). */
export type RecoveryKitBuilder = (options: { key: Uint8Array; profileName?: string; signal?: AbortSignal }) => Promise<RecoveryKitFile[]>;

/** Options of {@link BackupReader.open}. */
export interface BackupReadOptions {
  /** Decrypt an encrypted backup (compression is kept); ignored for unencrypted files. */
  decrypt: boolean;
  /** For a multi-database dump: stream only this database's dump (decrypted and decompressed). */
  database?: string;
  /**
   * For a seekable archive: stream only this file, named by its archive path as the archive listing shows it
   * (decrypted, decompressed, checked against its SHA-256); excludes `database`.
   */
  path?: string;
  /**
   * For a backup of a public-key encryption profile (issue 45) read with `decrypt`: the age private key
   * (`AGE-SECRET-KEY-1...` or a key file's text), used for this read only and never stored. Missing, malformed or
   * wrong: a 400 (ValidationError) before any byte is streamed.
   */
  privateKey?: string;
  signal?: AbortSignal;
}

/** A backup opened for reading: its (decoded) bytes, the name to give them and what its sidecar says. */
export interface OpenedBackup {
  stream: Readable;
  /** File name for the download (the key's last segment, without `.enc` when decrypted). */
  fileName: string;
  /** Bytes the stream will yield, when known in advance. */
  size?: number;
  /** The parsed `.meta.json` sidecar, or `null` when the backup has none. */
  sidecar: Record<string, unknown> | null;
}

/**
 * Reads stored backups for downloads: decrypts and splits multi-database dumps without exposing codec internals
 * (registered by the engine plugin). Throws `NotFoundError` for an unknown storage, `AdapterError(NOT_FOUND)` for a
 * missing file and `ValidationError` when a decoded download needs a `database` it was not given or names a `path`
 * that is not one file of a seekable archive.
 */
export interface BackupReader {
  open(storageConfigId: string, key: string, options: BackupReadOptions): Promise<OpenedBackup>;
}

/**
 * Figures of the execution queue and history, read at scrape time so every process of a shared database answers the
 * same (engine plugin; observability's Prometheus metrics).
 */
export interface ExecutionStats {
  /** The end of the last successful backup of each job that has one. */
  lastSuccessfulBackups(): Promise<Array<{ jobId: string; endedAt: Date }>>;
  /** Executions in a status across all processes: `Pending` is the queue depth, `Running` what runs now. */
  countByStatus(status: 'Pending' | 'Running'): Promise<number>;
}

/** One recorded storage snapshot of a destination (SPEC "StorageSnapshot"): its bytes and backup count at a time. */
export interface StorageUsagePoint {
  size: number;
  count: number;
  createdAt: Date;
}

/**
 * The storage snapshots the engine's storage statistics record, one per destination per refresh (engine plugin;
 * observability's storage alerts and usage-over-time route).
 */
export interface StorageUsage {
  /** The newest `limit` snapshots of a destination, newest first (empty when it has none). */
  latest(configId: string, limit: number): Promise<StorageUsagePoint[]>;
  /** A destination's snapshots taken from `from` to `to` (both included), oldest first, at most `limit`. */
  between(configId: string, from: Date, to: Date, limit: number): Promise<StorageUsagePoint[]>;
}

/** The point-in-time archive of one job as the gauges show it (engine plugin; observability's `/metrics`). */
export interface PointInTimeFigures {
  jobId: string;
  jobName: string;
  /** Recoverable window; null when no base backup is followed by unbroken archived log. */
  windowStart: Date | null;
  windowEnd: Date | null;
  /** Seconds from the window's end to now; null without a window. */
  recoveryPointSeconds: number | null;
  /** Archived pieces (completed segments and current partials) and their stored bytes, one copy. */
  segments: number;
  storedBytes: number;
  /** Log the replication slot retains on the database server beyond what was received, as last reported; null when never reported. */
  slotLagBytes: number | null;
}

/**
 * Figures of every point-in-time job's change-log archive, read from the engine's tables at scrape time so any process
 * of a shared database answers the same, whichever process streams (engine plugin; observability's Prometheus gauges).
 */
export interface PointInTimeStats {
  archives(): Promise<PointInTimeFigures[]>;
}
