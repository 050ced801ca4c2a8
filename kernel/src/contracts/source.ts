import type { Readable } from 'node:stream';
import type { HealthResult } from '../adapter-context.js';

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
}

/** Options of {@link SourceAdapter.restore}. */
export interface RestoreOptions {
  target: RestoreTarget;
  signal: AbortSignal;
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
  dump(options: DumpOptions): Promise<DumpHandle>;
  restore(stream: Readable, options: RestoreOptions): Promise<RestoreResult>;
  /** Restores (part of) a seekable archive snapshot; sources declaring `seekableArchive` implement it. */
  restoreArchive?(input: ArchiveRestoreInput, options: RestoreOptions): Promise<RestoreResult>;
  dispose?(): Promise<void>;
}
