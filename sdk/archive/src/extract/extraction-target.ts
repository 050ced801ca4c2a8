import { createHash } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { chmod, chown, lchown, link, lstat, lutimes, mkdir, open, symlink, unlink, utimes } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ArchiveFormatError, ArchiveUnsafePathError } from '../errors.js';
import type { EntryKind } from '../format/index-schema.js';
import { normalizeArchivePath } from '../format/paths.js';
import { paxTimeForUtimes } from '../format/times.js';
import { isAllZero } from '../zero-runs.js';

/** The metadata the target restores; index entries and streamed members both provide it. */
export interface RestorableEntry {
  path: string;
  kind: EntryKind;
  mode: number;
  uid: number;
  gid: number;
  mtime: string;
  size?: number;
  target?: string;
}

/** Options shared by {@link extractAll} and {@link restoreSnapshot}. */
export interface ExtractOptions {
  /** Restore uid/gid (needs root). @default true when running as root */
  restoreOwnership?: boolean;
}

/** Options of the target itself. */
interface TargetOptions extends ExtractOptions {
  /** Hash each file into `summary.sha256`. @default true */
  recordDigests?: boolean;
}

/** What was restored, returned by the extract functions. */
export interface ExtractSummary {
  files: number;
  directories: number;
  symlinks: number;
  hardlinks: number;
  /**
   * SHA-256 of each restored file's content, by archive path, so callers can check it against an index. Filled by
   * extractAll; restoreSnapshot checks every file against the index as it reads it and leaves this empty.
   */
  sha256: Map<string, string>;
}

// Sparse restore: runs of zeros this long are skipped (left as holes) instead of written, so a 9 GiB mostly-empty
// file costs what its data costs on disk.
const SPARSE_BLOCK = 64 * 1024;

/**
 * Writes members into a directory safely: no path may leave it, and no path may pass through a symlink (symlinks are
 * created last, so an archive cannot plant one and then write through it). Directory modes and mtimes are applied
 * at the end, deepest first, because creating entries inside a directory changes its mtime.
 */
export class ExtractionTarget {
  readonly summary: ExtractSummary = { files: 0, directories: 0, symlinks: 0, hardlinks: 0, sha256: new Map() };
  private readonly realDirectories = new Set<string>();
  private readonly directories: RestorableEntry[] = [];
  private readonly symlinks: RestorableEntry[] = [];
  private readonly hardlinks: RestorableEntry[] = [];
  private readonly restoreOwnership: boolean;
  private readonly recordDigests: boolean;

  constructor(
    private readonly root: string,
    options: TargetOptions = {},
  ) {
    this.restoreOwnership = options.restoreOwnership ?? process.getuid?.() === 0;
    this.recordDigests = options.recordDigests ?? true;
  }

  /** Creates a directory now; its metadata is applied in {@link finish}. */
  async directory(entry: RestorableEntry): Promise<void> {
    const path = normalizeArchivePath(entry.path);
    await this.ensureDirectory(path);
    this.directories.push({ ...entry, path });
    this.summary.directories += 1;
  }

  /** Writes a file (or dump) from its content, replacing whatever non-directory was at its path. */
  async file(entry: RestorableEntry, content: AsyncIterable<Buffer>): Promise<void> {
    const path = normalizeArchivePath(entry.path);
    const absolute = await this.prepareLeaf(path);
    const handle = await open(absolute, fsConstants.O_WRONLY | fsConstants.O_CREAT | fsConstants.O_EXCL | fsConstants.O_NOFOLLOW, 0o600);
    const hash = this.recordDigests ? createHash('sha256') : undefined;
    let position = 0;
    try {
      for await (const chunk of content) {
        hash?.update(chunk);
        for (let start = 0; start < chunk.length; start += SPARSE_BLOCK) {
          const block = chunk.subarray(start, start + SPARSE_BLOCK);
          if (!isAllZero(block)) await handle.write(block, 0, block.length, position);
          position += block.length;
        }
      }
      await handle.truncate(position);
      if (this.restoreOwnership) await handle.chown(entry.uid, entry.gid);
      await handle.chmod(entry.mode);
    } finally {
      await handle.close();
    }
    const seconds = paxTimeForUtimes(entry.mtime);
    await utimes(absolute, seconds, seconds);
    this.summary.files += 1;
    if (hash) this.summary.sha256.set(path, hash.digest('hex'));
  }

  /** Records a symlink to create in {@link finish}. */
  symlink(entry: RestorableEntry): void {
    this.symlinks.push({ ...entry, path: normalizeArchivePath(entry.path) });
  }

  /** Records a hard link to create in {@link finish} (its target must be extracted by then). */
  hardlink(entry: RestorableEntry): void {
    this.hardlinks.push({ ...entry, path: normalizeArchivePath(entry.path), target: normalizeArchivePath(entry.target ?? '') });
  }

  /** Creates hard links, then symlinks, then applies directory metadata deepest first. */
  async finish(): Promise<ExtractSummary> {
    const symlinkByPath = new Map(this.symlinks.map((entry) => [entry.path, entry]));
    for (const entry of this.hardlinks) {
      const targetSymlink = symlinkByPath.get(entry.target as string);
      // A hard link to a symlink becomes a second symlink with the same target: equivalent, and it never resolves
      // a link while the extraction is still running.
      if (targetSymlink) {
        this.symlinks.push({ ...targetSymlink, path: entry.path });
        continue;
      }
      const targetAbsolute = await this.existingLeaf(entry.target as string);
      if (!(await lstat(targetAbsolute).catch(() => undefined))?.isFile()) {
        throw new ArchiveFormatError(`hard link "${entry.path}" points at "${entry.target}", which was not restored as a file`);
      }
      await link(targetAbsolute, await this.prepareLeaf(entry.path));
      this.summary.hardlinks += 1;
    }
    for (const entry of this.symlinks) {
      const absolute = await this.prepareLeaf(entry.path);
      await symlink(entry.target ?? '', absolute);
      if (this.restoreOwnership) await lchown(absolute, entry.uid, entry.gid);
      const seconds = paxTimeForUtimes(entry.mtime);
      await lutimes(absolute, seconds, seconds);
      this.summary.symlinks += 1;
    }
    const deepestFirst = [...this.directories].sort((a, b) => b.path.split('/').length - a.path.split('/').length);
    for (const entry of deepestFirst) {
      const absolute = join(this.root, entry.path);
      if (this.restoreOwnership) await chown(absolute, entry.uid, entry.gid);
      await chmod(absolute, entry.mode);
      const seconds = paxTimeForUtimes(entry.mtime);
      await utimes(absolute, seconds, seconds);
    }
    return this.summary;
  }

  // Makes sure every directory of `path` exists as a real directory inside the root (never a symlink).
  private async ensureDirectory(path: string): Promise<void> {
    if (this.realDirectories.has(path)) return;
    if (path === '') {
      // The extraction root itself is the caller's choice and may be anywhere (even behind a symlink).
      await mkdir(this.root, { recursive: true });
      this.realDirectories.add('');
      return;
    }
    await this.ensureDirectory(dirname(path) === '.' ? '' : dirname(path));
    const absolute = join(this.root, path);
    const existing = await lstat(absolute).catch(() => undefined);
    if (!existing) await mkdir(absolute, { mode: 0o755 }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    const created = existing ?? (await lstat(absolute));
    if (!created.isDirectory()) {
      throw new ArchiveUnsafePathError(`"${path}" is not a directory in the target (a symlink or file is in the way)`);
    }
    this.realDirectories.add(path);
  }

  // Parent directories exist and are real; whatever non-directory sits at the path is removed (not written through).
  private async prepareLeaf(path: string): Promise<string> {
    await this.ensureDirectory(dirname(path) === '.' ? '' : dirname(path));
    const absolute = join(this.root, path);
    const existing = await lstat(absolute).catch(() => undefined);
    if (existing?.isDirectory()) throw new ArchiveUnsafePathError(`"${path}" is a directory in the target; refusing to replace it`);
    if (existing) await unlink(absolute);
    return absolute;
  }

  private async existingLeaf(path: string): Promise<string> {
    await this.ensureDirectory(dirname(path) === '.' ? '' : dirname(path));
    return join(this.root, path);
  }
}
