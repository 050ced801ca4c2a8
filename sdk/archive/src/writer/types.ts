import type { IndexFileBytes } from '../format/index-file.js';
import type { ArchiveIndex, ChainInfo, Compression } from '../format/index-schema.js';
import type { MtimeInput } from '../format/times.js';

/** Options of `createArchiveWriter`. */
export interface ArchiveWriterOptions {
  /** The archive's object name on storage; references from later archives of a chain use it. */
  archiveName?: string;
  /** Recorded in the manifest and index. @default now */
  createdAt?: Date;
  /** Position in an incremental chain; omit for a standalone archive. */
  chain?: ChainInfo | null;
  /** Default compression of file and dump data. @default 'none' */
  compression?: Compression;
  /** gzip 1-9 or zstd 1-22. @default 6 for gzip, 3 for zstd */
  compressionLevel?: number;
  /** Uncompressed bytes per part of a chunked member. @default 1 MiB */
  chunkSize?: number;
  /** Seals the index file (encryption, signing). The result is stored in the archive and returned as the sidecar. */
  sealIndex?: (indexFile: Buffer) => Buffer | Promise<Buffer>;
  /** Free-form strings recorded in the manifest (never secrets: the manifest is not sealed). */
  metadata?: Record<string, string>;
}

/** Ownership, permissions and time shared by every member kind. */
export interface EntryMeta {
  path: string;
  /** Permission bits (0o7777). @default 0o644 for files, 0o755 for directories, 0o777 for symlinks */
  mode?: number;
  uid?: number;
  gid?: number;
  uname?: string;
  gname?: string;
  /** @default the archive's createdAt */
  mtime?: MtimeInput;
  inode?: number;
  device?: number;
}

/** A regular file. With `size` and no compression it is stored as one tar entry (GNU tar extracts it as is). */
export interface FileMeta extends EntryMeta {
  size?: number;
  compression?: Compression;
  /**
   * The source hands out views of one buffer it reads into again for its next chunk: the writer copies what it keeps
   * instead of keeping the chunk (for compressed members it copies anyway; stored ones then cost a copy).
   */
  reusesBuffers?: boolean;
}

/** Options of `ArchiveWriter.addDatabaseDump`. */
export interface DatabaseDumpOptions {
  size?: number;
  compression?: Compression;
  mtime?: MtimeInput;
  mode?: number;
}

/** What `ArchiveWriter.finish` returns once the last byte is emitted. */
export interface ArchiveResult {
  index: ArchiveIndex;
  /**
   * The index member's stored bytes (sealed when `sealIndex` is set): write them as the `.index` sidecar with
   * `Readable.from(indexFile.chunks())`. Unsealed, they are serialised from `index` again on each reading.
   */
  indexFile: IndexFileBytes;
  archiveSize: number;
}
