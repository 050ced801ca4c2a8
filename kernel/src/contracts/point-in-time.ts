import type { Readable } from 'node:stream';
import type { DumpHandle, DumpStats } from './source.js';

// Point-in-time recovery (docs/pitr.md): a source that can take a physical base backup of a whole server and stream
// the server's change log (PostgreSQL WAL, later MySQL/MariaDB binary logs). The engine stores base backups as
// ordinary backups and the log as numbered segments beside them; these are the shapes that cross the contract.

/** Which change log a source streams; base backups and segments of one kind only restore with each other. */
export type ChangeLogKind = 'postgres-wal' | 'mysql-binlog';

/** What a physical base backup records about itself (the engine keeps it in the backup's sidecar). */
export interface BaseBackupInfo {
  logKind: ChangeLogKind;
  /** Log position where the backup starts (PostgreSQL LSN `0/2000028`); replay begins at or before it. */
  startPosition: string;
  /** Log position the restored copy must replay to before it is consistent. */
  stopPosition: string;
  /** Log segment (file name) that holds `startPosition`: restores fetch the log from this segment on. */
  startSegment: string;
  timeline: number;
  /** Server identity (PostgreSQL `system_identifier`): segments of another server never restore with this base. */
  systemId: string;
  serverVersion: string;
  startedAt: Date;
  /** The earliest instant a restore from this base can reach (the backup's end). */
  consistentAt: Date;
}

/** Figures of a finished base backup. */
export interface BaseBackupStats extends DumpStats {
  base: BaseBackupInfo;
}

/** A running base backup: a dump whose `done` also says where it starts and ends in the log. */
export interface BaseBackupHandle extends Omit<DumpHandle, 'done'> {
  done: Promise<BaseBackupStats>;
}

/**
 * One piece of the change log ready to archive, on local disk in the stream's spool folder. A completed segment
 * (`partial: false`) never changes again; a partial one is the segment being written, flushed so the recovery point
 * stays seconds old, and is followed later by newer partials and finally by the completed segment of the same name.
 */
export interface ChangeLogSegment {
  /** Segment name as the server names it (PostgreSQL `000000010000000000000003`), the same for a partial. */
  name: string;
  partial: boolean;
  timeline: number;
  /** The file in the spool folder; the archiver reads it, stores it, then calls {@link ChangeLogStream.archived}. */
  path: string;
  size: number;
  /** Log position covered up to (exclusive), when the source knows it. */
  endPosition?: string;
  /** Every commit at or before this instant is in this segment or an earlier one. */
  coversUntil: Date;
}

/** What the stream reports besides segments (system events and gauges). */
export type ChangeLogNotice =
  | { type: 'started'; slot: string; resumedFrom?: string }
  | { type: 'gap'; message: string; lastArchived?: string; nextAvailable?: string }
  | { type: 'slot-missing'; slot: string; message: string }
  | { type: 'lag'; bytes: number }
  | { type: 'warning'; message: string };

/** Options of {@link PointInTimeSupport.openChangeLogStream}. */
export interface ChangeLogStreamOptions {
  /** Stable id of this stream (the engine passes the job id); the replication slot is named after it. */
  streamId: string;
  /**
   * Folder the stream writes to and keeps between restarts (below the data directory): segments written but not yet
   * archived when the process died are reported again on the next start.
   */
  spoolDir: string;
  /** How often the segment being written is reported as a partial, in milliseconds. */
  flushIntervalMs: number;
  signal: AbortSignal;
}

/** A running change-log stream; it ends only when `signal` aborts or it fails. */
export interface ChangeLogStream {
  /** Segments in log order; the same completed segment is never yielded twice once `archived` was called for it. */
  segments: AsyncIterable<ChangeLogSegment>;
  /** The segment (or partial) at `path` is stored at every destination: the spool may forget it. */
  archived(segment: ChangeLogSegment): Promise<void>;
  /** Notices as they happen (slot created or resumed, gap, lag). */
  onNotice(listener: (notice: ChangeLogNotice) => void): void;
  /** Settles when the stream stopped: resolves after an abort, rejects with the reason of a failure. */
  done: Promise<void>;
}

/** Where a point-in-time restore stops replaying. */
export type RecoveryTarget =
  | { type: 'latest' }
  | { type: 'time'; time: Date }
  | {
      type: 'position';
      position: string;
      /**
       * MySQL/MariaDB only: `position` is a GTID (MariaDB's `domain-server-sequence`, `0-1-352`), not a log offset:
       * every transaction up to and including the one with this GTID is replayed, none after it in log order. A
       * member of `position` rather than a type of its own so that sources which switch over every target type
       * keep compiling; a source that cannot honour it refuses with CONFIG (the engine offers it to MySQL jobs only).
       */
      isGtid?: boolean;
    }
  | { type: 'name'; name: string };

/** Input of {@link PointInTimeSupport.restoreToPoint}. */
export interface PointRestoreInput {
  base: BaseBackupInfo;
  /** The base backup's plain (decompressed, decrypted) stream: a tar of the data directory for PostgreSQL. */
  baseStream: Readable;
  /**
   * One segment's plain bytes, or null when the archive has no such segment (replay ends there). Called by the
   * restore for each segment it needs, in order; names are the server's (a partial is asked for by its full name).
   */
  fetchSegment(name: string): Promise<Readable | null>;
  target: RecoveryTarget;
  /**
   * PostgreSQL (required there): an empty (or absent) folder on the Holdfast host where the restored data directory is
   * built. MySQL/MariaDB restores into a database instead ({@link PointRestoreInput.database}).
   */
  targetPath?: string;
  /**
   * MySQL/MariaDB (required there): which database of the base to restore (`name`) and the new database it is built in
   * (`into`, absent on the source's server): the base is loaded into it and the binary log replayed with `name`
   * rewritten to `into`, so the original database is never touched.
   */
  database?: { name: string; into: string };
  /** PostgreSQL: start the restored server on this port and leave it running; absent: replay, check, then stop it. */
  servePort?: number;
  signal: AbortSignal;
  onProgress?(message: string): void;
}

/** Outcome of a point-in-time restore. */
export interface PointRestoreResult {
  warnings: string[];
  /** The last commit the restored copy holds, as the server reports it after recovery, when known. */
  recoveredTo?: Date;
  /** Set when `servePort` was given: the running server (stop it with `pg_ctl -D dataDir stop`). */
  served?: { port: number; dataDir: string };
}

/**
 * What {@link PointInTimeSupport.readiness} found about the server and account, as sentences an operator acts on.
 * Ready means `problems` is empty.
 */
export interface PointInTimeReadiness {
  /** What makes point-in-time recovery impossible (binary logging off, a missing privilege); the catalog refuses to save a job then. */
  problems: string[];
  /** What works but degrades it or risks the server (an unlimited slot can fill the disk); never a reason to refuse. */
  warnings: string[];
}

/** What a source offers for point-in-time recovery; `SourceAdapter.pointInTime` returns it when configured for it. */
export interface PointInTimeSupport {
  readonly logKind: ChangeLogKind;
  /** Takes a physical base backup through the one-pass pipeline; `done` carries {@link BaseBackupInfo}. */
  baseBackup(options: { signal: AbortSignal }): Promise<BaseBackupHandle>;
  openChangeLogStream(options: ChangeLogStreamOptions): ChangeLogStream;
  restoreToPoint(input: PointRestoreInput): Promise<PointRestoreResult>;
  /** Drops the stream's slot on the server (the job stops archiving); a missing slot is not an error. */
  dropChangeLogStream?(streamId: string): Promise<void>;
  /**
   * Asks the server whether it can serve point-in-time recovery now (the same checks as test-connection in this mode),
   * without changing anything on it. The catalog calls it before saving a job on this source. A server that cannot be
   * reached or signed in to rejects, as `check()` would report it; `signal` is the caller's time bound (an abort may
   * reject with ABORTED or settle late: the caller has stopped waiting).
   */
  readiness?(options: { signal: AbortSignal }): Promise<PointInTimeReadiness>;
}
