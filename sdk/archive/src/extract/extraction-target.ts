import { createHash } from 'node:crypto';
import { constants as fsConstants } from 'node:fs';
import { chmod, chown, lchown, link, lstat, lutimes, mkdir, open, symlink, unlink, utimes } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { ArchiveUnsafePathError } from '../errors.js';
import type { EntryKind } from '../format/index-schema.js';
import { normalizeArchivePath } from '../format/paths.js';
import { paxTimeForUtimes } from '../format/times.js';
import { isAllZero } from '../zero-runs.js';
import { RestoreContainment } from './containment.js';

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
  /**
   * Restore setuid, setgid and sticky bits. Honoured only together with the owners (`restoreOwnership`); otherwise
   * the bits are dropped and each such member is named in `warnings`. @default false
   */
  keepSpecialModes?: boolean;
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
  /**
   * Members the containment rule refused, each named with the reason, and members restored without their
   * setuid/setgid/sticky bits (docs/security.md). Empty when everything was restored as archived.
   */
  warnings: string[];
  /** The folders the archive listed, relative to the extraction root (what RestoreStaging.commit asks about). */
  directoryPaths: string[];
}

// Sparse restore: runs of zeros this long are skipped (left as holes) instead of written, so a 9 GiB mostly-empty
// file costs what its data costs on disk.
const SPARSE_BLOCK = 64 * 1024;

// How a refusal reads in the warnings, by kind (the tar restore of the directory source words them the same).
const REFUSED: Partial<Record<string, string>> = { symlink: 'symlink refused', hardlink: 'hard link refused' };
// Warnings kept verbatim; past this many a hostile archive of a million refused members only grows a count.
const MAX_WARNINGS = 200;

/**
 * Writes members into a directory under the containment rule (RestoreContainment, docs/security.md): no path may
 * leave it, nothing is written through a symlink (symlinks are created last, after every one of them was resolved
 * through the others and found to stay inside), a hard link must point at a file this restore wrote, setuid, setgid
 * and sticky bits are dropped unless asked for with the owners. Refused members are skipped and named in
 * `summary.warnings`; a member name that is absolute or holds `..` is not a Holdfast archive's and throws
 * ArchiveUnsafePathError. Directory modes and mtimes are applied at the end, deepest first, because creating entries
 * inside a directory changes its mtime.
 */
export class ExtractionTarget {
  readonly summary: ExtractSummary = { files: 0, directories: 0, symlinks: 0, hardlinks: 0, sha256: new Map(), warnings: [], directoryPaths: [] };
  private readonly realDirectories = new Set<string>();
  private readonly directories: RestorableEntry[] = [];
  private readonly hardlinks: RestorableEntry[] = [];
  private readonly refused = new Set<string>();
  private readonly containment: RestoreContainment<RestorableEntry>;
  private readonly restoreOwnership: boolean;
  private readonly recordDigests: boolean;
  private droppedWarnings = 0;

  constructor(
    private readonly root: string,
    options: TargetOptions = {},
  ) {
    this.restoreOwnership = options.restoreOwnership ?? process.getuid?.() === 0;
    this.recordDigests = options.recordDigests ?? true;
    this.containment = new RestoreContainment({ keepSpecialModes: options.keepSpecialModes === true && this.restoreOwnership });
  }

  /** Creates a directory now; its metadata is applied in {@link finish}. */
  async directory(entry: RestorableEntry): Promise<void> {
    const admitted = this.admit(entry);
    if (!admitted) return;
    const isCreated = await this.refuseUnsafe(entry.path, async () => {
      await this.ensureDirectory(admitted.path);
      return true;
    });
    if (!isCreated) return;
    this.directories.push({ ...entry, path: admitted.path, mode: admitted.mode });
    this.summary.directories += 1;
  }

  /** Writes a file (or dump) from its content, replacing whatever non-directory was at its path. */
  async file(entry: RestorableEntry, content: AsyncIterable<Buffer>): Promise<void> {
    const admitted = this.admit(entry);
    if (!admitted) return;
    const { path } = admitted;
    const absolute = await this.refuseUnsafe(entry.path, () => this.prepareLeaf(path));
    if (!absolute) return;
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
      // Owner before mode: chown clears setuid/setgid bits.
      if (this.restoreOwnership) await handle.chown(entry.uid, entry.gid);
      await handle.chmod(admitted.mode);
    } finally {
      await handle.close();
    }
    const seconds = paxTimeForUtimes(entry.mtime);
    await utimes(absolute, seconds, seconds);
    this.summary.files += 1;
    if (hash) this.summary.sha256.set(path, hash.digest('hex'));
  }

  /** Records a symlink to create in {@link finish}, once every symlink of the archive is known. */
  symlink(entry: RestorableEntry): void {
    this.admit(entry);
  }

  /** Records a hard link to create in {@link finish} (its target must be extracted by then). */
  hardlink(entry: RestorableEntry): void {
    const admitted = this.admit({ ...entry, target: normalizeArchivePath(entry.target ?? '') });
    // A hard link to a symlink of the archive became a second symlink: it is created with the symlinks.
    if (admitted && !admitted.becameSymlink) this.hardlinks.push({ ...entry, path: admitted.path, target: admitted.linkTarget as string });
  }

  /** Names a device node or FIFO member as refused (nothing is created for it). */
  special(entry: RestorableEntry, kind: 'device' | 'fifo'): void {
    const verdict = this.containment.admit({ path: normalizeArchivePath(entry.path), kind });
    if ('refused' in verdict) this.refuse(normalizeArchivePath(entry.path), `refused, ${verdict.refused}`);
  }

  /** True when the member at `path` (normalised) was refused, so callers do not look for its content. */
  isRefused(path: string): boolean {
    return this.refused.has(path);
  }

  /** Creates hard links, then the symlinks that stay inside, then applies directory metadata deepest first. */
  async finish(): Promise<ExtractSummary> {
    for (const entry of this.hardlinks) {
      const target = entry.target as string;
      const linked = await this.refuseUnsafe(entry.path, async () => {
        const absolute = await this.existingLeaf(target);
        return (await lstat(absolute).catch(() => undefined))?.isFile() ? absolute : undefined;
      });
      if (linked === undefined) {
        if (!this.refused.has(entry.path)) this.refuse(entry.path, `hard link refused, its link target "${target}" was not restored as a file`);
        continue;
      }
      const leaf = await this.refuseUnsafe(entry.path, () => this.prepareLeaf(entry.path));
      if (!leaf) continue;
      await link(linked, leaf);
      this.summary.hardlinks += 1;
    }
    // A folder already in the target (not one of the archive's: the rule refuses those) keeps a symlink out; the
    // others are then resolved through that folder, not through the link that will not exist.
    for (const path of this.containment.symlinkPaths()) {
      if ((await lstat(join(this.root, path)).catch(() => undefined))?.isDirectory()) {
        this.containment.withdraw(path);
        this.refuse(path, 'symlink refused, a folder is in the way in the target');
      }
    }
    const { accepted, refused } = this.containment.settle();
    for (const link of refused) this.refuse(link.path, `symlink refused, ${link.reason}`);
    for (const { path, target, payload } of accepted) {
      const entry = payload as RestorableEntry;
      const absolute = await this.refuseUnsafe(path, () => this.prepareLeaf(path));
      if (!absolute) continue;
      await symlink(target, absolute);
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
      this.summary.directoryPaths.push(entry.path);
    }
    if (this.droppedWarnings > 0) this.summary.warnings.push(`... and ${this.droppedWarnings} more warnings`);
    return this.summary;
  }

  // The containment rule's verdict; a refused member is named and undefined returned. An unsafe name throws.
  private admit(entry: RestorableEntry): { path: string; mode: number; linkTarget?: string; becameSymlink?: boolean } | undefined {
    const path = normalizeArchivePath(entry.path);
    const kind = entry.kind;
    const isLink = kind === 'symlink' || kind === 'hardlink';
    const verdict = this.containment.admit({ path, kind, mode: entry.mode, ...(isLink ? { target: entry.target ?? '', payload: { ...entry, path } } : {}) });
    if ('refused' in verdict) {
      this.refuse(path, `${REFUSED[kind] ?? 'refused'}, ${verdict.refused}`);
      return undefined;
    }
    if (verdict.note) this.warn(`${path}: ${verdict.note}`);
    return verdict;
  }

  private refuse(path: string, reason: string): void {
    this.refused.add(path);
    this.warn(`${path}: ${reason}`);
  }

  private warn(message: string): void {
    if (this.summary.warnings.length < MAX_WARNINGS) this.summary.warnings.push(message);
    else this.droppedWarnings += 1;
  }

  // Runs a step that may find something in the way (a file where a folder must be, a folder where a leaf goes): the
  // member is then refused, not the whole restore.
  private async refuseUnsafe<T>(path: string, step: () => Promise<T>): Promise<T | undefined> {
    try {
      return await step();
    } catch (error) {
      if (!(error instanceof ArchiveUnsafePathError)) throw error;
      this.refuse(path, `refused, ${error.message}`);
      return undefined;
    }
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
