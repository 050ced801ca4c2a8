import { lstatSync, readdirSync, readlinkSync, statSync, type Stats } from 'node:fs';
import { lstat, readdir, readlink, stat } from 'node:fs/promises';
import { basename, normalize } from 'node:path';
import picomatch from 'picomatch';
import type { KernelLogger } from '@holdfast/sdk';
import { aborted, describeFileError, errnoOf } from './errors.js';
import type { WarningList } from './warnings.js';

/** One thing to put into the tar, in archive order. */
export interface ArchiveEntry {
  kind: 'file' | 'directory' | 'symlink';
  /** Member name in the tar (`/`-separated, no trailing slash). */
  member: string;
  /** Where it lives on disk. */
  absolute: string;
  stats: Stats;
  /** Symlink target as stored in the link. */
  linkTarget?: string;
}

/** One configured root and its position in the config (the member name prefix). */
export interface ArchiveRoot {
  index: number;
  path: string;
}

/** How a walk behaves. */
export interface WalkOptions {
  exclude: readonly string[];
  followSymlinks: boolean;
  /** Why a followed symlink may not be read (the host's local path rule), or undefined when it may. */
  refusal?: (absolute: string) => Promise<string | undefined>;
  warnings: WarningList;
  logger: KernelLogger;
  signal: AbortSignal;
}

/**
 * Member name prefix of a root: `<index>-<basename>`, so two roots with the same basename (`/a/data`, `/b/data`)
 * land in `0-data/` and `1-data/` instead of colliding. The root `/` becomes `<index>-root`.
 */
export function rootMember(root: ArchiveRoot): string {
  return `${root.index}-${basename(root.path) || 'root'}`;
}

/**
 * The entries of every root depth-first in name order. Problems with single entries (vanished files, unreadable
 * folders, symlink loops, special files) become warnings and the walk goes on; the roots themselves were checked
 * before the dump started. A plain iterable when every call of the walk is synchronous (no refusal check of followed
 * links): an async generator cost each entry a promise, and one more per folder level through `yield*`.
 */
export function walkRoots(roots: readonly ArchiveRoot[], options: WalkOptions): Iterable<ArchiveEntry> | AsyncIterable<ArchiveEntry> {
  const excluded = options.exclude.length > 0 ? picomatch([...options.exclude], { dot: true, basename: true }) : undefined;
  return options.followSymlinks && options.refusal ? walkRootsAsync(roots, excluded, options) : walkRootsSync(roots, excluded, options);
}

function* walkRootsSync(roots: readonly ArchiveRoot[], excluded: Excluded, options: WalkOptions): Generator<ArchiveEntry> {
  for (const root of roots) {
    // The configured root itself is always followed: pointing a job at a symlinked folder means its content.
    const stats = statSync(root.path);
    const entry = rootEntry(root, stats, options);
    if (entry) yield entry;
    if (entry?.kind === 'directory') yield* walkDirectorySync(root.path, entry.member, '', [`${stats.dev}:${stats.ino}`], excluded, options);
  }
}

async function* walkRootsAsync(roots: readonly ArchiveRoot[], excluded: Excluded, options: WalkOptions): AsyncGenerator<ArchiveEntry> {
  for (const root of roots) {
    const stats = await stat(root.path);
    const entry = rootEntry(root, stats, options);
    if (entry) yield entry;
    if (entry?.kind === 'directory') yield* walkDirectory(root.path, entry.member, '', [`${stats.dev}:${stats.ino}`], excluded, options);
  }
}

/** A root's own entry (a folder or a single file), or a warning and nothing. */
function rootEntry(root: ArchiveRoot, stats: Stats, options: WalkOptions): ArchiveEntry | undefined {
  const member = rootMember(root);
  if (stats.isDirectory()) return { kind: 'directory', member, absolute: root.path, stats };
  if (stats.isFile()) return { kind: 'file', member, absolute: root.path, stats };
  options.warnings.add(`${root.path}: skipped, not a regular file or directory`);
  return undefined;
}

/** The exclude patterns' matcher of paths relative to the root, or undefined when nothing is excluded. */
type Excluded = ((path: string) => boolean) | undefined;

/** One folder of the walk: where it is, its member name, its path relative to the root and its ancestors' identities. */
interface Folder {
  directory: string;
  member: string;
  relative: string;
  ancestors: string[];
  /** `directory` with one trailing slash, normalized once: `join(directory, name)` normalized the whole path for every
   * name and was the largest allocation of a walk (docs/benchmarks.md, 2026-12-07); a readdir name has no slash. */
  base: string;
}

function folderOf(directory: string, member: string, relative: string, ancestors: string[]): Folder {
  const normalized = normalize(directory);
  return { directory, member, relative, ancestors, base: normalized.endsWith('/') ? normalized : `${normalized}/` };
}

function relativeOf(folder: Folder, name: string): string {
  return folder.relative === '' ? name : `${folder.relative}/${name}`;
}

function isExcluded(excluded: Excluded, folder: Folder, name: string): boolean {
  return excluded !== undefined && excluded(relativeOf(folder, name));
}

/**
 * What a stated name of `folder` is in the archive: a folder (not a loop back to an ancestor), a file or a symlink
 * (its target still to be read); undefined, with a warning or a debug line, for everything that is skipped.
 */
function classify(folder: Folder, name: string, inspection: Inspection, options: WalkOptions): { kind: ArchiveEntry['kind']; absolute: string; identity?: string } | undefined {
  if ('excluded' in inspection) return undefined;
  if ('warning' in inspection) {
    options.warnings.add(inspection.warning);
    return undefined;
  }
  const { stats } = inspection;
  const absolute = folder.base + name;
  if (stats.isDirectory()) {
    const identity = `${stats.dev}:${stats.ino}`;
    if (folder.ancestors.includes(identity)) {
      options.warnings.add(`${absolute}: skipped, symlink loop back to a parent folder`);
      return undefined;
    }
    return { kind: 'directory', absolute, identity };
  }
  if (stats.isFile()) return { kind: 'file', absolute };
  if (stats.isSymbolicLink()) return { kind: 'symlink', absolute };
  if (stats.isSocket()) {
    // Sockets are endpoints of running programs, meaningless in a backup (GNU tar ignores them too).
    options.logger.debug({ path: absolute }, 'socket not archived');
  } else {
    options.warnings.add(`${absolute}: skipped, FIFOs and device files are not archived`);
  }
  return undefined;
}

// Names of one folder whose stats are asked for ahead of the one being yielded.
const STAT_AHEAD = 32;

/** What the stat of one name found: its stats, a warning instead, or that an exclude pattern matched it. */
type Inspection = { stats: Stats } | { warning: string } | { excluded: true };

/** Stats one name as the walk needs them (following links when configured); never rejects. */
async function inspect(absolute: string, options: WalkOptions): Promise<Inspection> {
  try {
    // A followed link must not carry Holdfast's own data directory (system key, database) into the archive.
    if (options.followSymlinks && options.refusal && (await lstat(absolute)).isSymbolicLink()) {
      const refused = await options.refusal(absolute);
      if (refused !== undefined) return { warning: `${absolute}: symlink not followed, ${refused}` };
    }
    const stats = options.followSymlinks
      ? await stat(absolute).catch(async (error: unknown) => {
          // A dangling link cannot be followed; say so rather than "vanished".
          if (errnoOf(error) === 'ENOENT' && (await lstat(absolute)).isSymbolicLink()) throw new Error('dangling symlink');
          throw error;
        })
      : await lstat(absolute);
    return { stats };
  } catch (error) {
    return { warning: `${absolute}: skipped, ${describeFileError(error)}` };
  }
}

/**
 * The same as {@link inspect} with synchronous calls, for a walk that asks nothing asynchronous of a name (no refusal
 * check of followed links). A stat of a name in the page cache takes a few microseconds; through libuv's pool it cost
 * the main thread about 20 us and was the largest item of a small-file backup's profile (docs/benchmarks.md,
 * 2026-12-07). The writer yields to the event loop every few milliseconds.
 */
function inspectSync(absolute: string, options: WalkOptions): Inspection {
  try {
    if (!options.followSymlinks) return { stats: lstatSync(absolute) };
    try {
      return { stats: statSync(absolute) };
    } catch (error) {
      // A dangling link cannot be followed; say so rather than "vanished".
      if (errnoOf(error) === 'ENOENT' && lstatSync(absolute).isSymbolicLink()) throw new Error('dangling symlink');
      throw error;
    }
  } catch (error) {
    return { warning: `${absolute}: skipped, ${describeFileError(error)}` };
  }
}

function* walkDirectorySync(directory: string, member: string, relative: string, ancestors: string[], excluded: Excluded, options: WalkOptions): Generator<ArchiveEntry> {
  const folder = folderOf(directory, member, relative, ancestors);
  let names: string[];
  try {
    names = readdirSync(directory).sort();
  } catch (error) {
    options.warnings.add(`${directory}: folder skipped, ${describeFileError(error)}`);
    return;
  }
  for (const name of names) {
    const inspection: Inspection = isExcluded(excluded, folder, name) ? { excluded: true } : inspectSync(folder.base + name, options);
    if (options.signal.aborted) throw aborted('dump');
    const found = classify(folder, name, inspection, options);
    if (!found || !('stats' in inspection)) continue;
    const { stats } = inspection;
    const entryMember = `${member}/${name}`;
    if (found.kind === 'symlink') {
      let linkTarget: string;
      try {
        linkTarget = readlinkSync(found.absolute);
      } catch (error) {
        options.warnings.add(`${found.absolute}: skipped, ${describeFileError(error)}`);
        continue;
      }
      yield { kind: 'symlink', member: entryMember, absolute: found.absolute, stats, linkTarget };
      continue;
    }
    yield { kind: found.kind, member: entryMember, absolute: found.absolute, stats };
    if (found.identity !== undefined) yield* walkDirectorySync(found.absolute, entryMember, relativeOf(folder, name), [...ancestors, found.identity], excluded, options);
  }
}

/** The walk with a refusal check of followed links: asynchronous, the stats of a folder's next names asked ahead. */
async function* walkDirectory(directory: string, member: string, relative: string, ancestors: string[], excluded: Excluded, options: WalkOptions): AsyncGenerator<ArchiveEntry> {
  const folder = folderOf(directory, member, relative, ancestors);
  let names: string[];
  try {
    names = (await readdir(directory)).sort();
  } catch (error) {
    options.warnings.add(`${directory}: folder skipped, ${describeFileError(error)}`);
    return;
  }
  // The stats of the next names are asked for while this one is handled: each lstat is a round trip to libuv's thread
  // pool, and one at a time they were most of the time of a tree of small files (docs/benchmarks.md, "Many small files").
  const ahead: Promise<Inspection>[] = [];
  let asked = 0;
  const askNext = () => {
    if (asked === names.length) return;
    const name = names[asked++]!;
    ahead.push(isExcluded(excluded, folder, name) ? Promise.resolve({ excluded: true }) : inspect(folder.base + name, options));
  };
  while (asked < Math.min(STAT_AHEAD, names.length)) askNext();
  for (const name of names) {
    askNext();
    const inspection = await ahead.shift()!;
    if (options.signal.aborted) throw aborted('dump');
    const found = classify(folder, name, inspection, options);
    if (!found || !('stats' in inspection)) continue;
    const { stats } = inspection;
    const entryMember = `${member}/${name}`;
    if (found.kind === 'symlink') {
      let linkTarget: string;
      try {
        linkTarget = await readlink(found.absolute);
      } catch (error) {
        options.warnings.add(`${found.absolute}: skipped, ${describeFileError(error)}`);
        continue;
      }
      yield { kind: 'symlink', member: entryMember, absolute: found.absolute, stats, linkTarget };
      continue;
    }
    yield { kind: found.kind, member: entryMember, absolute: found.absolute, stats };
    if (found.identity !== undefined) yield* walkDirectory(found.absolute, entryMember, relativeOf(folder, name), [...ancestors, found.identity], excluded, options);
  }
}
