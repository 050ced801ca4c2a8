import type { Readable } from 'node:stream';
import { ArchiveInputError } from '../errors.js';
import { DATABASES_PREFIX, DEFAULT_CHUNK_SIZE, PAX, RESERVED_PREFIX } from '../format/constants.js';
import { bufferedIndexFile, encodeIndexFile, indexFileBytes } from '../format/index-file.js';
import { chainSchema, compressionSchema, type ArchiveIndex, type ChainInfo, type Compression, type IndexEntry } from '../format/index-schema.js';
import { normalizeArchivePath } from '../format/paths.js';
import { encodeTarHeader, TYPE_FLAG, type TarHeader } from '../format/tar-header.js';
import { toPaxTime } from '../format/times.js';
import { writeIndexAndTrailer, writeManifest } from './format-members.js';
import { writeChunkedMember, writeWholeMember } from './member-data.js';
import { ArchiveOutput } from './output.js';
import type { ArchiveResult, ArchiveWriterOptions, DatabaseDumpOptions, EntryMeta, FileMeta } from './types.js';

export type { ArchiveResult, ArchiveWriterOptions, DatabaseDumpOptions, EntryMeta, FileMeta } from './types.js';

/**
 * Writes a Holdfast archive as a Readable. Members are added one after another (calls queue up); each add resolves
 * once its bytes have been taken by the consumer, so memory stays flat whatever the member sizes.
 */
export class ArchiveWriter extends ArchiveOutput {
  private readonly entries = new Map<string, IndexEntry>();
  private readonly deletions: string[] = [];
  private readonly renames: { from: string; to: string }[] = [];
  private readonly createdAt: Date;
  private readonly compression: Compression;
  private readonly chunkSize: number;
  private readonly chain: ChainInfo | null;
  private queue: Promise<unknown> = Promise.resolve();
  private failure: Error | undefined;
  private isFinished = false;

  constructor(private readonly options: ArchiveWriterOptions = {}) {
    super();
    this.createdAt = options.createdAt ?? new Date();
    this.compression = parseCompression(options.compression ?? 'none', 'the archive');
    this.chunkSize = options.chunkSize ?? DEFAULT_CHUNK_SIZE;
    if (!Number.isSafeInteger(this.chunkSize) || this.chunkSize < 4096 || this.chunkSize > 64 * 1024 * 1024) {
      throw new ArchiveInputError(`chunkSize must be an integer from 4096 to 67108864, got ${options.chunkSize}`);
    }
    const chain = chainSchema.nullable().safeParse(options.chain ?? null);
    if (!chain.success) throw new ArchiveInputError(`invalid chain: ${chain.error.issues[0]?.message}`);
    this.chain = chain.data;
    if (this.chain && this.chain.baseArchives.length !== this.chain.sequence) {
      throw new ArchiveInputError(`chain sequence ${this.chain.sequence} needs exactly ${this.chain.sequence} base archives`);
    }
    void this.enqueue(() =>
      writeManifest(
        this,
        {
          format: 'holdfast-archive',
          version: 1,
          ...(options.archiveName ? { archiveName: options.archiveName } : {}),
          createdAt: this.createdAt.toISOString(),
          chain: this.chain,
          defaultCompression: this.compression,
          isIndexSealed: options.sealIndex !== undefined,
          metadata: options.metadata ?? {},
        },
        this.createdAt,
      ),
    );
  }

  /**
   * Adds a regular file; `source` is read once, in order, with backpressure. A source that reads into one buffer it
   * reuses (an async iterable, not a Readable, which would read ahead) sets `meta.reusesBuffers`.
   */
  addFile(meta: FileMeta, source: Readable | AsyncIterable<Buffer>): Promise<void> {
    return this.enqueue(async () => {
      const path = this.claimPath(meta.path);
      const compression = parseCompression(meta.compression ?? this.compression, `"${path}"`);
      if (meta.size !== undefined && (!Number.isSafeInteger(meta.size) || meta.size < 0)) {
        throw new ArchiveInputError(`size of "${path}" must be a non-negative integer`);
      }
      await this.writeData({ ...meta, path }, 'file', compression, source, {});
    });
  }

  /** Adds one database's dump under `.holdfast/databases/<name>`, with the name in the member's headers. */
  addDatabaseDump(name: string, source: Readable, options: DatabaseDumpOptions = {}): Promise<void> {
    return this.enqueue(async () => {
      if (typeof name !== 'string' || name.length === 0) throw new ArchiveInputError('a database dump needs a database name');
      const path = DATABASES_PREFIX + encodeURIComponent(name);
      if (this.entries.has(path)) throw new ArchiveInputError(`database "${name}" is already in this archive`);
      const compression = parseCompression(options.compression ?? this.compression, `database "${name}"`);
      const meta = { path, size: options.size, mode: options.mode ?? 0o600, mtime: options.mtime };
      await this.writeData(meta, 'database-dump', compression, source, { [PAX.kind]: 'database-dump', [PAX.database]: name }, name);
    });
  }

  /** Adds a directory (empty or not) so its mode, owner and mtime are restored. */
  addDirectory(meta: EntryMeta): Promise<void> {
    return this.enqueue(async () => {
      const path = this.claimPath(meta.path);
      const header = this.header({ ...meta, path }, `${path}/`, TYPE_FLAG.directory, 0o755);
      await this.writeMetadataOnly(header, { path, kind: 'directory' });
    });
  }

  /** Adds a symbolic link; `target` is stored as given (it may be relative, absolute or dangling). */
  addSymlink(meta: EntryMeta, target: string): Promise<void> {
    return this.enqueue(async () => {
      const path = this.claimPath(meta.path);
      if (typeof target !== 'string' || target.length === 0) throw new ArchiveInputError(`symlink "${path}" needs a target`);
      const header = { ...this.header({ ...meta, path }, path, TYPE_FLAG.symlink, 0o777), linkName: target };
      await this.writeMetadataOnly(header, { path, kind: 'symlink', target });
    });
  }

  /**
   * Adds a hard link to a file added earlier (tar needs the target first). In an incremental archive the target may
   * be a reference; the link then resolves only when the snapshot is restored (restoreSnapshot), not by this archive alone.
   */
  addHardLink(meta: EntryMeta, targetPath: string): Promise<void> {
    return this.enqueue(async () => {
      const path = this.claimPath(meta.path);
      const target = normalizeArchivePath(targetPath);
      const targetEntry = this.entries.get(target);
      if (!targetEntry || targetEntry.kind !== 'file') {
        throw new ArchiveInputError(`hard link "${path}" must point at a file added earlier to this archive, not "${target}"`);
      }
      const header = { ...this.header({ ...meta, path }, path, TYPE_FLAG.hardlink, targetEntry.mode), linkName: target };
      await this.writeMetadataOnly(header, { path, kind: 'hardlink', target });
    });
  }

  /**
   * Incremental runs: records an unchanged member whose data stays in an earlier archive of the chain. `path` renames
   * it (record the rename with {@link recordRename} too).
   */
  addReference(entry: IndexEntry, fromArchive: string, path?: string): Promise<void> {
    return this.enqueue(async () => {
      const archive = entry.archive ?? fromArchive;
      if (!this.chain?.baseArchives.includes(archive)) {
        throw new ArchiveInputError(`"${archive}" is not a base archive of this chain; only chained archives hold references`);
      }
      const claimed = this.claimPath(path ?? entry.path, entry.kind === 'database-dump');
      this.entries.set(claimed, { ...entry, path: claimed, archive });
    });
  }

  /** Records that a path of the previous snapshot is gone in this one. */
  recordDeletion(path: string): void {
    this.deletions.push(normalizeArchivePath(path));
  }

  /** Records that a path of the previous snapshot now lives at another path. */
  recordRename(from: string, to: string): void {
    this.renames.push({ from: normalizeArchivePath(from), to: normalizeArchivePath(to) });
  }

  /** Writes the index and trailer, ends the stream, and returns the index and the sidecar's bytes (produced on reading). */
  finish(): Promise<ArchiveResult> {
    return this.enqueue(async () => {
      this.isFinished = true;
      const index: ArchiveIndex = {
        format: 'holdfast-archive-index',
        version: 1,
        ...(this.options.archiveName ? { archiveName: this.options.archiveName } : {}),
        createdAt: this.createdAt.toISOString(),
        chain: this.chain,
        entries: [...this.entries.values()],
        // Copies: the index is read again after finish (the sidecar), so it must not share lists the writer owns.
        deletions: [...this.deletions],
        renames: [...this.renames],
      };
      // Unsealed, the index file is serialised again for each reading rather than kept: 15 MB for 50,000 files.
      const indexFile = this.options.sealIndex
        ? bufferedIndexFile(Buffer.from(await this.options.sealIndex(encodeIndexFile(index))))
        : indexFileBytes(index);
      await writeIndexAndTrailer(this, indexFile, this.options.sealIndex !== undefined, this.createdAt);
      this.endOutput();
      return { index, indexFile, archiveSize: this.position };
    });
  }

  private enqueue<T>(operation: () => Promise<T>): Promise<T> {
    const run = async () => {
      if (this.failure) throw this.failure;
      if (this.isFinished) throw new ArchiveInputError('the archive is already finished');
      const startPosition = this.position;
      try {
        return await operation();
      } catch (error) {
        // Refused input (nothing written) leaves the archive usable. Bytes of a half-written member cannot be taken
        // back, though: from there on the archive is unusable and its stream fails.
        if (this.position !== startPosition || this.destroyed) {
          this.failure = error as Error;
          this.destroy(error as Error);
        }
        throw error;
      }
    };
    const result = this.queue.then(run, run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private claimPath(rawPath: string, isReservedAllowed = false): string {
    const path = normalizeArchivePath(rawPath);
    if (!isReservedAllowed && `${path}/`.startsWith(RESERVED_PREFIX)) {
      throw new ArchiveInputError(`"${path}" is reserved for the archive format (${RESERVED_PREFIX})`);
    }
    if (this.entries.has(path)) throw new ArchiveInputError(`"${path}" is already in this archive`);
    return path;
  }

  private header(meta: EntryMeta, name: string, typeFlag: string, defaultMode: number): TarHeader {
    const mode = meta.mode ?? defaultMode;
    if (!Number.isInteger(mode) || mode < 0) throw new ArchiveInputError(`mode of "${meta.path}" must be a non-negative integer`);
    for (const id of [meta.uid, meta.gid]) {
      if (id !== undefined && (!Number.isSafeInteger(id) || id < 0)) throw new ArchiveInputError(`uid/gid of "${meta.path}" must be non-negative integers`);
    }
    return {
      name,
      mode: mode & 0o7777,
      uid: meta.uid ?? 0,
      gid: meta.gid ?? 0,
      size: 0,
      mtime: toPaxTime(meta.mtime ?? this.createdAt),
      typeFlag,
      linkName: '',
      uname: meta.uname ?? '',
      gname: meta.gname ?? '',
      pax: {},
    };
  }

  private entryFields(header: TarHeader, meta: EntryMeta): Omit<IndexEntry, 'path' | 'kind' | 'offset' | 'length'> {
    return {
      mode: header.mode,
      uid: header.uid,
      gid: header.gid,
      ...(header.uname ? { uname: header.uname } : {}),
      ...(header.gname ? { gname: header.gname } : {}),
      mtime: header.mtime,
      ...(meta.inode !== undefined ? { inode: meta.inode } : {}),
      ...(meta.device !== undefined ? { device: meta.device } : {}),
    };
  }

  private async writeMetadataOnly(header: TarHeader, entry: Pick<IndexEntry, 'path' | 'kind' | 'target'>): Promise<void> {
    const offset = this.position;
    await this.append(encodeTarHeader(header));
    this.entries.set(entry.path, { ...entry, ...this.entryFields(header, { path: entry.path }), offset, length: this.position - offset });
  }

  private async writeData(
    meta: FileMeta,
    kind: 'file' | 'database-dump',
    compression: Compression,
    source: Readable | AsyncIterable<Buffer>,
    pax: Record<string, string>,
    database?: string,
  ): Promise<void> {
    const template = { ...this.header(meta, meta.path, TYPE_FLAG.file, 0o644), pax };
    const offset = this.position;
    const written =
      compression === 'none' && meta.size !== undefined
        ? await writeWholeMember(this, { ...template, size: meta.size }, source, meta.reusesBuffers === true)
        : await writeChunkedMember(
            this,
            { path: meta.path, compression, level: this.options.compressionLevel, chunkSize: this.chunkSize, template, sizeHint: meta.size },
            source,
          );
    this.entries.set(meta.path, {
      path: meta.path,
      kind,
      ...this.entryFields(template, meta),
      size: written.size,
      ...(database !== undefined ? { database } : {}),
      compression,
      offset,
      length: this.position - offset,
      sha256: written.sha256,
      ...(written.isSizeChanged || (meta.size !== undefined && meta.size !== written.size) ? { isSizeChanged: true } : {}),
    });
  }
}

function parseCompression(value: unknown, subject: string): Compression {
  const parsed = compressionSchema.safeParse(value);
  if (!parsed.success) throw new ArchiveInputError(`compression of ${subject} must be none, gzip or zstd, got ${JSON.stringify(value)}`);
  return parsed.data;
}

/** Creates an archive writer; read the returned stream (pipe it to storage) while adding members. */
export function createArchiveWriter(options: ArchiveWriterOptions = {}): ArchiveWriter {
  return new ArchiveWriter(options);
}
