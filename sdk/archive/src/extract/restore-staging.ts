import { randomBytes } from 'node:crypto';
import type { BigIntStats } from 'node:fs';
import { chmod, cp, lchown, lstat, mkdir, readdir, realpath, rename, rm, rmdir, utimes } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { paxTimeForUtimes, toPaxTime } from '../format/times.js';

/** Options of {@link RestoreStaging.commit}. */
export interface StagingCommitOptions {
  /**
   * Whether the staged folder at `stagedPath` (absolute, in a staging folder; the staging folder itself stands for
   * the target) was a folder of the archive. Such a folder that already exists in the target gets the staged folder's
   * mode and mtime (and owner with `restoreOwnership`), as an in-place restore would have given it; other existing
   * folders keep theirs.
   */
  isRestoredDirectory?: (stagedPath: string) => boolean;
  /** Owners were restored: existing folders take the staged folder's owner too. @default false */
  restoreOwnership?: boolean;
  /**
   * Replace nothing: a staged entry whose name exists in the target now (other than a folder merged into a folder),
   * or a new target that has appeared and is not an empty folder, fails the commit with a {@link ReplaceRefusedError};
   * the moves done so far are undone and the staging discarded (a restore not allowed to overwrite). @default false
   */
  refuseReplacing?: boolean;
}

/** A {@link RestoreStaging.commit} with `refuseReplacing` found `path` in the way; the target is as it was. */
export class ReplaceRefusedError extends Error {
  constructor(readonly path: string) {
    super(`"${path}" exists and the restore would replace it`);
    this.name = 'ReplaceRefusedError';
  }
}

type JournalStep =
  | { kind: 'placed'; path: string; from: string; isCopy: boolean }
  | { kind: 'displaced'; path: string; aside: string }
  | { kind: 'metadata'; path: string; stats: BigIntStats };

/**
 * Where a target is staged: `new` beside a target that does not exist yet (moved into place by one rename), `beside`
 * an existing target on the same file system, `inside` an existing target when beside it is not possible (the target
 * is a mount point, or its parent cannot be written).
 */
type Placement = 'new' | 'beside' | 'inside';

interface StagedFolder {
  target: string;
  staging: string;
  placement: Placement;
  /** The folder holding the staging folder, before the staging folder was made in it (its times are put back). */
  holderBefore: BigIntStats;
  /** A new target's mode as mkdir gives it (the staging folder is private while it is built). */
  newMode?: number;
}

const isRoot = () => process.getuid?.() === 0;
const STAGING_PREFIX = '.holdfast-restore-';

/**
 * A restore built where nobody looks and moved into place only once all of it was written and verified
 * (docs/security.md, "Atomic folder restores"). Each target gets a private staging folder beside it
 * (`.<name>.holdfast-restore-<id>` in the same parent: the same file system, so moving an entry into place is one
 * rename, and the target itself is not touched before the commit), or inside it (`.holdfast-restore-<id>`) when the
 * target is a mount point or its parent cannot be written. {@link commit} moves a new target into place with one
 * rename, and merges a staged tree into an existing target: a staged entry replaces the entry of the same name (a
 * staged folder is merged into an existing folder), entries of the target that the backup does not hold stay, as they
 * did when restores wrote in place. Replaced entries are set aside until the end, so a move that fails puts everything
 * back. {@link discard} (after a failure) removes the staging and the folders this restore created for new targets.
 */
export class RestoreStaging {
  private readonly id = randomBytes(6).toString('hex');
  private readonly folders = new Map<string, StagedFolder>();
  private readonly byRequest = new Map<string, StagedFolder>();
  /** Folders created above new targets, outermost first, with the times of the folder holding each. */
  private readonly created: { path: string; parentBefore: BigIntStats }[] = [];
  private asides: string[] = [];
  private counter = 0;

  /** The staging folder for `target` (whose missing parents are created); the same answer for the same target. */
  async folderFor(target: string): Promise<string> {
    const requested = this.byRequest.get(target);
    if (requested) return requested.staging;
    const absolute = resolve(target);
    const existing = await lstat(absolute).catch(ignoreMissing);
    if (existing && !existing.isDirectory()) throw new Error(`${target} is not a folder`);
    const key = existing ? await realpath(absolute) : join(await this.createMissing(dirname(absolute)), basename(absolute));
    let folder = this.folders.get(key);
    if (!folder) {
      folder = existing ? await this.stageExisting(key) : await this.stageNew(key);
      this.folders.set(key, folder);
    }
    this.byRequest.set(target, folder);
    return folder.staging;
  }

  /**
   * Moves every staged tree into its target. On any failure the moves done so far are undone, the staging is
   * discarded and the error is thrown: the targets are as they were. Returns problems met while removing what was
   * replaced (the restore itself succeeded then).
   */
  async commit(options: StagingCommitOptions = {}): Promise<string[]> {
    const journal: JournalStep[] = [];
    try {
      // Refused before anything moves, so the target keeps even its folders' times; the checks during the moves
      // below only catch what appears in the moment between (those moves are undone).
      if (options.refuseReplacing) {
        for (const folder of this.folders.values()) {
          const inTheWay = folder.placement === 'new' ? ((await isOccupied(folder.target)) ? folder.target : undefined) : await firstReplaced(folder.staging, folder.target);
          if (inTheWay) throw new ReplaceRefusedError(inTheWay);
        }
      }
      for (const folder of this.folders.values()) {
        const staged = await lstat(folder.staging, { bigint: true });
        const isListed = options.isRestoredDirectory?.(folder.staging) === true;
        if (folder.placement === 'new') {
          if (options.refuseReplacing && (await isOccupied(folder.target))) throw new ReplaceRefusedError(folder.target);
          if (!isListed && folder.newMode !== undefined) await chmod(folder.staging, folder.newMode);
          await move(folder.staging, folder.target, await lstat(folder.staging, { bigint: true }));
          journal.push({ kind: 'placed', path: folder.target, from: folder.staging, isCopy: false });
          continue;
        }
        journal.push({ kind: 'metadata', path: folder.target, stats: await lstat(folder.target, { bigint: true }) });
        await this.merge(folder.staging, folder.target, journal, options);
        if (isListed) await applyFolderMetadata(folder.target, staged, options.restoreOwnership === true);
      }
    } catch (error) {
      const leftovers = await this.rollBack(journal);
      await this.discard();
      if (error instanceof ReplaceRefusedError && leftovers.length === 0) throw error;
      const reason = (error as Error).message;
      if (leftovers.length > 0) throw new Error(`moving the restored files into place failed (${reason}) and could not be undone for: ${leftovers.join('; ')}`);
      throw new Error(`moving the restored files into place failed (${reason}); the target was put back as it was`, { cause: error });
    }
    const problems: string[] = [];
    const leftovers = [...this.folders.values()].filter((folder) => folder.placement !== 'new').map((folder) => folder.staging);
    await eachLimited([...this.asides, ...leftovers], MERGE_LANES, (path) =>
      rm(path, { recursive: true, force: true }).catch((error: Error) => {
        problems.push(`could not remove ${path}: ${error.message}`);
      }),
    );
    this.folders.clear();
    this.byRequest.clear();
    this.created.splice(0);
    return problems;
  }

  /** Removes every staging folder and the folders created for new targets; puts the times of what held them back. */
  async discard(): Promise<void> {
    for (const folder of this.folders.values()) {
      await rm(folder.staging, { recursive: true, force: true }).catch(() => undefined);
      await setTimes(dirname(folder.staging), folder.holderBefore).catch(() => undefined);
    }
    this.folders.clear();
    this.byRequest.clear();
    for (const { path, parentBefore } of this.created.splice(0).reverse()) {
      await rmdir(path).catch(() => undefined);
      await setTimes(dirname(path), parentBefore).catch(() => undefined);
    }
  }

  private async stageNew(target: string): Promise<StagedFolder> {
    const holder = dirname(target);
    const holderBefore = await lstat(holder, { bigint: true });
    const staging = join(holder, `.${basename(target)}${STAGING_PREFIX}${this.id}`);
    await mkdir(staging);
    const newMode = Number((await lstat(staging, { bigint: true })).mode & 0o7777n);
    await chmod(staging, 0o700);
    return { target, staging, placement: 'new', holderBefore, newMode };
  }

  private async stageExisting(target: string): Promise<StagedFolder> {
    const holder = dirname(target);
    const [own, parent] = await Promise.all([lstat(target, { bigint: true }), lstat(holder, { bigint: true })]);
    if (holder !== target && own.dev === parent.dev) {
      const staging = join(holder, `.${basename(target)}${STAGING_PREFIX}${this.id}`);
      try {
        await mkdir(staging, { mode: 0o700 });
        return { target, staging, placement: 'beside', holderBefore: parent };
      } catch (error) {
        if (!['EACCES', 'EPERM', 'EROFS'].includes((error as NodeJS.ErrnoException).code ?? '')) throw error;
      }
    }
    const staging = join(target, `${STAGING_PREFIX}${this.id}`);
    await mkdir(staging, { mode: 0o700 });
    return { target, staging, placement: 'inside', holderBefore: own };
  }

  // mkdir -p that remembers what it made, so a failed restore leaves no empty folders behind; returns the real path.
  private async createMissing(absolute: string): Promise<string> {
    const missing: string[] = [];
    let existing = absolute;
    while (!(await lstat(existing).catch(() => undefined))) {
      missing.unshift(existing);
      const parent = dirname(existing);
      if (parent === existing) break;
      existing = parent;
    }
    for (const path of missing) {
      const parentBefore = await lstat(dirname(path), { bigint: true });
      await mkdir(path);
      this.created.push({ path: await realpath(path), parentBefore });
    }
    return realpath(absolute);
  }

  private async merge(from: string, to: string, journal: JournalStep[], options: StagingCommitOptions): Promise<void> {
    // Entries are moved out of `from`, which needs write access to it; it is discarded afterwards either way.
    if (!isRoot()) await chmod(from, 0o700);
    // Several entries at once (each is a few round trips to the thread pool): a merge over 20,000 existing files
    // took 7 s one at a time. Each entry's own steps stay in order in the journal, which is all the undo needs.
    await eachLimited(await readdir(from), MERGE_LANES, async (name) => {
      const source = join(from, name);
      const destination = join(to, name);
      const staged = await lstat(source, { bigint: true });
      const existing = await lstat(destination, { bigint: true }).catch(ignoreMissing);
      if (staged.isDirectory() && existing?.isDirectory()) {
        journal.push({ kind: 'metadata', path: destination, stats: existing });
        await this.merge(source, destination, journal, options);
        if (options.isRestoredDirectory?.(source)) await applyFolderMetadata(destination, staged, options.restoreOwnership === true);
        return;
      }
      if (existing) {
        if (options.refuseReplacing) throw new ReplaceRefusedError(destination);
        const aside = join(to, `.holdfast-replaced-${this.id}-${(this.counter += 1)}`);
        await move(destination, aside, existing);
        journal.push({ kind: 'displaced', path: destination, aside });
        this.asides.push(aside);
      }
      await this.place(source, destination, staged, journal);
    });
  }

  // One rename; across file systems (a mount point inside the target) a copy beside the destination, then a rename.
  private async place(source: string, destination: string, stats: BigIntStats, journal: JournalStep[]): Promise<void> {
    try {
      await move(source, destination, stats);
      journal.push({ kind: 'placed', path: destination, from: source, isCopy: false });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    }
    const copy = join(dirname(destination), `.holdfast-copy-${this.id}-${(this.counter += 1)}`);
    try {
      await cp(source, copy, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true, errorOnExist: true, force: false });
      await rename(copy, destination);
    } catch (error) {
      await rm(copy, { recursive: true, force: true }).catch(() => undefined);
      throw error;
    }
    journal.push({ kind: 'placed', path: destination, from: source, isCopy: true });
  }

  // Undoes the journal, newest step first; returns what could not be put back.
  private async rollBack(journal: JournalStep[]): Promise<string[]> {
    const leftovers: string[] = [];
    for (const step of journal.reverse()) {
      try {
        if (step.kind === 'placed') {
          if (step.isCopy) await rm(step.path, { recursive: true, force: true });
          else await move(step.path, step.from, await lstat(step.path, { bigint: true }));
        } else if (step.kind === 'displaced') {
          await move(step.aside, step.path, await lstat(step.aside, { bigint: true }));
          this.asides = this.asides.filter((aside) => aside !== step.aside);
        } else {
          await restoreFolderMetadata(step.path, step.stats);
        }
      } catch (error) {
        leftovers.push(`${step.path} (${(error as Error).message})`);
      }
    }
    return leftovers;
  }
}

// Entries merged at once per folder (libuv's pool has four threads; a few more keep it busy between round trips).
const MERGE_LANES = 8;

/**
 * Runs `work` for every item, at most `limit` at a time. After a failure no new item starts, and the first error is
 * thrown only once the running ones ended: an undo must never race a move still in flight.
 */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async () => {
    while (!failure && next < items.length) {
      const item = items[next++] as T;
      try {
        await work(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failure) throw failure.error;
}

/** The first entry of `to` that merging `from` into it would replace (a folder merged into a folder is not one). */
async function firstReplaced(from: string, to: string): Promise<string | undefined> {
  // A staged folder this process cannot read (an archived 0300 folder, not running as root) is left to the check
  // during the merge, which makes it readable first.
  const names = await readdir(from).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'EACCES') return [];
    throw error;
  });
  for (const name of names) {
    const destination = join(to, name);
    const existing = await lstat(destination).catch(ignoreMissing);
    if (!existing) continue;
    if (!existing.isDirectory() || !(await lstat(join(from, name))).isDirectory()) return destination;
    const below = await firstReplaced(join(from, name), destination);
    if (below) return below;
  }
  return undefined;
}

/** True when `path` exists and is not an empty folder. */
async function isOccupied(path: string): Promise<boolean> {
  const stats = await lstat(path).catch(ignoreMissing);
  if (!stats) return false;
  return !stats.isDirectory() || (await readdir(path)).length > 0;
}

function ignoreMissing(error: NodeJS.ErrnoException): undefined {
  if (error.code === 'ENOENT') return undefined;
  throw error;
}

// Moving a folder to another parent rewrites its "..", which needs write access to the folder itself: a read-only
// folder (0555) gets it for the move when the restore does not run as root.
async function move(from: string, to: string, stats: BigIntStats): Promise<void> {
  const mode = Number(stats.mode & 0o7777n);
  const needsWrite = stats.isDirectory() && (mode & 0o200) === 0 && !isRoot();
  if (needsWrite) await chmod(from, mode | 0o200);
  await rename(from, to);
  if (needsWrite) await chmod(to, mode);
}

async function applyFolderMetadata(path: string, staged: BigIntStats, restoreOwnership: boolean): Promise<void> {
  if (restoreOwnership) await lchown(path, Number(staged.uid), Number(staged.gid));
  await chmod(path, Number(staged.mode & 0o7777n));
  const mtime = paxTimeForUtimes(toPaxTime(staged.mtimeNs));
  await utimes(path, mtime, mtime);
}

async function restoreFolderMetadata(path: string, stats: BigIntStats): Promise<void> {
  const current = await lstat(path, { bigint: true });
  if (current.uid !== stats.uid || current.gid !== stats.gid) await lchown(path, Number(stats.uid), Number(stats.gid));
  if (current.mode !== stats.mode) await chmod(path, Number(stats.mode & 0o7777n));
  await setTimes(path, stats);
}

function setTimes(path: string, stats: BigIntStats): Promise<void> {
  return utimes(path, paxTimeForUtimes(toPaxTime(stats.atimeNs)), paxTimeForUtimes(toPaxTime(stats.mtimeNs)));
}
