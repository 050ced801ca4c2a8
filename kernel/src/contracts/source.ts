import type { Readable, Writable } from 'node:stream';
import type { HealthResult } from '../adapter-context.js';
import type { PointInTimeSupport } from './point-in-time.js';

/** What a source declares it can do. */
export interface SourceCapabilities {
  /** Several databases (or paths) in one dump. */
  multipleDatabases: boolean;
  /** `listDatabases` returns real names. */
  listDatabases: boolean;
  /** `restore` is implemented. */
  restore: boolean;
  /** The dump is a directory/file archive rather than a database dump. */
  fileArchive: boolean;
  /**
   * `dump` honours {@link DumpOptions.archive} (writes a Holdfast seekable archive, docs/formats/archive.md) and
   * `restoreArchive` is implemented. Absent means false.
   */
  seekableArchive?: boolean;
  /**
   * The source takes part in test restores: `scratch()` is implemented and its {@link SourceScratch} has this
   * placement. Absent: the source has no scratch databases (directory sources use a scratch folder instead).
   */
  scratchRestore?: ScratchPlacement;
}

/** Engine version as detected on the server. */
export interface SourceVersion {
  version: string;
  edition?: string;
}

/** Options of {@link SourceAdapter.dump}. */
export interface DumpOptions {
  /** Databases (or paths) to include; empty means all. */
  databases: string[];
  signal: AbortSignal;
  /** Engine-specific options from the job (for example `pgCompression`). */
  engineOptions?: Readonly<Record<string, unknown>>;
  /**
   * Write the dump as a Holdfast seekable archive instead of the source's plain format. Only passed to sources that
   * declare `seekableArchive`; the engine then stores the stream as is (members are compressed inside the archive)
   * and `DumpStats.archive` must be set.
   */
  archive?: ArchiveDumpRequest;
  /**
   * The stdin of the child process that compresses this backup (`zstd`, `pigz`), offered when the engine compresses
   * outside its own process. A source whose bytes come from a child process of its own may give that child this pipe
   * as its stdout, so the uncompressed dump never passes through Holdfast's process; it then answers a handle with
   * {@link DumpHandle.piped} set and an empty `stream`. Sources that do not use it ignore it (the engine then writes
   * `stream` into the compressor as usual). The source must not write into it itself, nor end it.
   */
  compressorInput?: Writable;
}

// The seekable archive format lives in @holdfast/archive (sdk/archive), which the kernel does not depend on: these
// are the shapes that cross the contract, structurally compatible with that package's types (adapters get the
// package itself through @holdfast/sdk).

/** Compression of each member of a seekable archive. */
export type ArchiveMemberCompression = 'none' | 'gzip' | 'zstd';

/** Position of an archive in an incremental chain (`ChainInfo` of @holdfast/archive). */
export interface ArchiveChainPosition {
  id: string;
  sequence: number;
  /** Names (storage keys) of the earlier archives of the chain, oldest first. */
  baseArchives: string[];
}

/** Plaintext bytes `start..endInclusive` of one archive (`RangeReader` of @holdfast/archive). */
export type ArchiveRangeReader = (start: number, endInclusive: number) => Promise<Readable>;

/**
 * A resolved snapshot of an archive and its chain (`Snapshot` of @holdfast/archive). The kernel only carries it from
 * the engine to the source that reads it; sources treat it as that package's `Snapshot`.
 */
export interface ArchiveSnapshotRef {
  readonly archiveName: string;
  readonly entries: readonly object[];
}

/** What the engine reads of an archive's index (a subset of `ArchiveIndex` of @holdfast/archive). */
export interface ArchiveIndexSummary {
  readonly entries: ReadonlyArray<{ readonly path: string; readonly kind: string; readonly size?: number; readonly target?: string }>;
}

/** How the engine wants a seekable archive written (docs/formats/archive.md). */
export interface ArchiveDumpRequest {
  /** The archive's storage key; later archives of its chain refer to it by this name. */
  archiveName: string;
  createdAt: Date;
  /** Compression of each member's data (the job's codec). */
  compression: ArchiveMemberCompression;
  /** Level of that codec; absent: the codec's default. */
  compressionLevel?: number;
  /** Position in an incremental chain, or null for a standalone archive. */
  chain: ArchiveChainPosition | null;
  /** Incremental runs: the snapshot of the chain so far. Unchanged members become references to it. */
  previous?: ArchiveSnapshotRef;
}

/** Bytes produced afresh, in pieces, on each call of `chunks` (what `@holdfast/archive` returns as `indexFile`). */
export interface IndexFilePieces {
  readonly length: number;
  chunks(): Iterable<Buffer>;
}

/** Figures of a finished dump. */
export interface DumpStats {
  bytes: number;
  databases: string[];
  engineVersion?: string;
  /** Problems that did not stop the dump (unreadable files...); a non-empty list makes the run Partial. */
  warnings: string[];
  /** Set when the dump was written as a seekable archive: its index (the engine stores it as the index sidecar). */
  archive?: {
    index: ArchiveIndexSummary;
    /**
     * The index file to store as the `.index.json` sidecar (the engine seals it when the backup is encrypted): its
     * bytes, or better a producer of them in pieces, so a large index (15 MB for 50,000 files) is never held whole.
     */
    indexFile: Buffer | IndexFilePieces;
    archiveSize: number;
    /** Counts for the run log (files stored, unchanged, renamed...). */
    summary?: Readonly<Record<string, number>>;
  };
}

/**
 * A running dump. `stream` is backpressured; `done` settles after the stream ended and the producer (often a
 * child process) exited, rejecting when the dump failed even if bytes were produced.
 */
export interface DumpHandle {
  stream: Readable;
  done: Promise<DumpStats>;
  /** Suggested file extension including the dot, e.g. `.dump`, `.sql`, `.tar`. */
  extension: string;
  /**
   * Set when the dump went straight into {@link DumpOptions.compressorInput} (then `stream` ends without a byte): the
   * bytes written so far, for progress. `done` must reject when the dump failed, so the engine drops what was stored.
   */
  piped?: { bytesWritten(): number };
}

/** Where a restore goes. */
export interface RestoreTarget {
  /** Restore a single-database dump into this database. */
  database?: string;
  /** Source database name to target database name, for multi-database dumps. */
  databaseMapping?: Readonly<Record<string, string>>;
  /** Directory sources: restore below this path instead of the original location. */
  path?: string;
  /** Directory sources: put every archived root back where it was backed up from (overwriting); excludes `path`. */
  originalPaths?: boolean;
  /**
   * Directory sources: restore setuid, setgid and sticky bits, and with them the archived owners (needs Holdfast to
   * run as root). Without it those bits are dropped and each such member is named in the warnings.
   */
  keepSpecialModes?: boolean;
}

/** One database of {@link SourceAdapter.databaseSizes}. */
export interface DatabaseSize {
  name: string;
  /** Bytes the database takes on the server (PostgreSQL `pg_database_size`, MySQL data plus index length). */
  sizeBytes: number;
}

/** Options of {@link SourceAdapter.restore}. */
export interface RestoreOptions {
  target: RestoreTarget;
  signal: AbortSignal;
  /**
   * Whether the restore may replace data that exists when it swaps its result in (issue 47). `false` for a request
   * that did not say `overwrite: true`: the restore fails, leaving the target as it was and no staging behind, rather
   * than replace a database (or volume) that exists, or a file of a non-empty folder, at the moment it would swap in
   * (the engine checked before queueing, but the target may have appeared since). `true`: replace, as asked.
   * Absent: the source's behaviour before this option (it replaces), for callers that restore into targets of their
   * own, such as test restores into scratch databases.
   */
  overwrite?: boolean;
  /**
   * The backup, decoded by the engine's decompressing child process (`zstd -d`, `pigz -d`), offered only to sources
   * that set {@link SourceAdapter.acceptsDecodedInput} and only when the engine decodes outside its own process. The
   * source then reads this instead of the restore's `stream` (which ends without a byte); one whose restore runs in
   * a child process of its own has the decoder write into that child's stdin, so the decoded bytes never pass
   * through Holdfast's process.
   */
  decodedInput?: DecodedRestoreInput;
}

/**
 * The decoded backup from the engine's decoder child ({@link RestoreOptions.decodedInput}). The decoder starts when
 * the source calls `decodeInto` or `open` (one of them, once); a source that calls neither restores nothing.
 */
export interface DecodedRestoreInput {
  /**
   * Decodes straight into `sink`: the stdin of a child process of the source's own (a pipe from `spawn`), which then
   * reads the decoded bytes without them passing through Holdfast's process. The engine gives the decoder `sink` as
   * its stdout and closes this process's copy; the child sees the end of its input when the decoder exits.
   */
  decodeInto(sink: Writable): void;
  /** Decodes into a stream read in this process (for a source that cannot start its child here). */
  open(): Readable;
  /**
   * Settles once the decoder and what feeds it are done: resolves when every byte of the stored file matched the
   * SHA-256 its sidecar records (and its encryption tag) and the decoder exited cleanly, rejects with the reason
   * otherwise. The source makes its result visible (moves the staged data into place) only after it resolved, and
   * discards it when it rejects: the end of the decoded bytes alone does not say that they were genuine.
   */
  verified: Promise<void>;
}

/** A seekable archive snapshot to restore, with a reader for each archive of its chain. */
export interface ArchiveRestoreInput {
  snapshot: ArchiveSnapshotRef;
  /** Plaintext byte ranges of one archive of the chain (decrypted by the engine when encrypted). */
  rangeReaderFor(archiveName: string): ArchiveRangeReader;
  /** Archive paths (files or folders) to restore; absent or empty: the whole snapshot. */
  include?: readonly string[];
}

/** Outcome of a restore. */
export interface RestoreResult {
  warnings: string[];
}

/**
 * A backup source (database engine, directories, volume). `dump` rejects when the source cannot be reached, so a
 * connect failure fails the run before any byte is uploaded: an empty or truncated stream is never a success.
 */
export interface SourceAdapter {
  check(): Promise<HealthResult>;
  detectVersion(): Promise<SourceVersion>;
  listDatabases(): Promise<string[]>;
  /**
   * The databases `listDatabases` returns, each with its size on the server in bytes (the restore wizard shows
   * them). Optional: without it, callers fall back to `listDatabases` and show no sizes. Rejects like
   * `listDatabases` when the server cannot be reached.
   */
  databaseSizes?(): Promise<DatabaseSize[]>;
  dump(options: DumpOptions): Promise<DumpHandle>;
  restore(stream: Readable, options: RestoreOptions): Promise<RestoreResult>;
  /**
   * True when `restore` reads {@link RestoreOptions.decodedInput} whenever it is given (and waits for its `verified`
   * before making the result visible); the engine then decodes ZSTD and GZIP backups in a child process and hands
   * its output over. Absent: the source always gets the decoded bytes as the restore's `stream`.
   */
  readonly acceptsDecodedInput?: boolean;
  /**
   * What a restore into `target` would write over that exists and holds data now (names to show, such as a volume
   * name), or an empty list. Optional: sources whose restore target the engine cannot work out on its own (a volume
   * restored into itself, rather than into a database it can list or a folder it can look at) implement it, and
   * the engine refuses (409) such a restore unless it says `overwrite: true`. Rejects when the target cannot be
   * reached.
   */
  restoreWouldReplace?(target: RestoreTarget, signal?: AbortSignal): Promise<string[]>;
  /** Restores (part of) a seekable archive snapshot; sources declaring `seekableArchive` implement it. */
  restoreArchive?(input: ArchiveRestoreInput, options: RestoreOptions): Promise<RestoreResult>;
  /**
   * The scratch databases of this configured source, for test restores; sources declaring `scratchRestore`
   * implement it. Throws an `AdapterError` with code `UNSUPPORTED` when this configuration cannot take part (a server
   * reached only over SSH, a dump mode that cannot be restored into a running server), saying why.
   */
  scratch?(): SourceScratch;
  /**
   * Point-in-time recovery (docs/pitr.md): physical base backups, the change-log stream and restore to an instant.
   * Optional; returns null when this configuration is not set up for it (a logical-mode PostgreSQL source).
   */
  pointInTime?(): PointInTimeSupport | null;
  dispose?(): Promise<void>;
}

/**
 * Where a test restore puts its throwaway copy (docs/architecture.md, "Test restores"):
 * - `database`: throwaway databases the engine names (`hf_test_restore_<tag>_<n>`) on the server, restored with
 *   `RestoreTarget.database` / `databaseMapping`, dropped afterwards;
 * - `file`: the database is one file; the engine restores it to a path (`RestoreTarget.path`) in a throwaway folder;
 * - `index`: one numbered database reserved for test restores (`RestoreTarget.database`), emptied afterwards.
 */
export type ScratchPlacement = 'database' | 'file' | 'index';

/** What a source's scratch databases offer whatever their placement. */
interface ScratchCommon {
  /**
   * What {@link figures} counts: `table-rows` maps each table to its exact row count; `keys` (key-value stores) is
   * `{ keys, expires }`, all keys and the keys with an expiry.
   */
  readonly counts: 'table-rows' | 'keys';
  /**
   * Figures of one database (a name, a file path for `file`, an index for `index`), recorded right after a backup
   * and compared with the restored copy. Rejects when the database cannot be read.
   */
  figures(database: string, signal?: AbortSignal): Promise<Record<string, number>>;
  /** The engine's own consistency check of a restored database: `ok`, its findings, or null when it has none. */
  integrityCheck(database: string, signal?: AbortSignal): Promise<string | null>;
}

/** Scratch as throwaway databases on the server ({@link ScratchPlacement} `database`). */
export interface ScratchDatabaseServer extends ScratchCommon {
  readonly placement: 'database';
  /** Names the server (for example `host:port`): two configurations with the same value reach one server. */
  readonly server: string;
  /** Databases whose name starts with `prefix` (to find scratch a crashed test restore left). */
  listDatabases(prefix: string): Promise<string[]>;
  databaseExists(database: string): Promise<boolean>;
  /** Drops the database, ending sessions still connected to it; a missing one is not an error. */
  dropDatabase(database: string): Promise<void>;
}

/** Scratch as a database file in a folder the engine creates and removes ({@link ScratchPlacement} `file`). */
export interface ScratchDatabaseFile extends ScratchCommon {
  readonly placement: 'file';
  /**
   * Where the throwaway folder is made and removed when that is not this process's disk (a source on a remote agent:
   * the folder is on the agent's). Absent: the engine makes it itself, below the target's path, on its own disk.
   */
  readonly folders?: ScratchFolders;
}

/** Throwaway folders of a {@link ScratchDatabaseFile} made elsewhere (on a remote agent's disk). */
export interface ScratchFolders {
  /** Makes `parent` (when missing) and a new folder below it whose name starts with `prefix`; resolves its path. */
  create(parent: string, prefix: string): Promise<string>;
  /** Removes the folder and everything in it; resolves true once it is verifiably gone. */
  remove(directory: string): Promise<boolean>;
}

/**
 * Scratch as one reserved numbered database ({@link ScratchPlacement} `index`). Its owner (the test restore's
 * execution id) is stored in it as one key without expiry, which `figures` counts, so a scratch a crash left can be
 * told from data someone else keeps there.
 */
export interface ScratchDatabaseIndex extends ScratchCommon {
  readonly placement: 'index';
  /** Names the server (for example `host:port`): two configurations with the same value reach one server. */
  readonly server: string;
  /** The owner recorded in the database, or null when none is. */
  readOwner(database: string): Promise<string | null>;
  writeOwner(database: string, owner: string): Promise<void>;
  /** Empties the database (every key, the owner's included). */
  dropDatabase(database: string): Promise<void>;
}

/** A source's scratch databases, by placement (returned by {@link SourceAdapter.scratch}). */
export type SourceScratch = ScratchDatabaseServer | ScratchDatabaseFile | ScratchDatabaseIndex;
