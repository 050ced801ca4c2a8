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
}

/** Figures of a finished dump. */
export interface DumpStats {
  bytes: number;
  databases: string[];
  engineVersion?: string;
  /** Problems that did not stop the dump (unreadable files...); a non-empty list makes the run Partial. */
  warnings: string[];
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
  dispose?(): Promise<void>;
}
