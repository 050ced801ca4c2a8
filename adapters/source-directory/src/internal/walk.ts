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
 * Yields the entries of every root depth-first in name order. Problems with single entries (vanished files,
 * unreadable folders, symlink loops, special files) become warnings and the walk goes on; the roots themselves were
 * checked before the dump started.
 */
export async function* walkRoots(roots: readonly ArchiveRoot[], options: WalkOptions): AsyncGenerator<ArchiveEntry> {
  const excluded = options.exclude.length > 0 ? picomatch([...options.exclude], { dot: true, basename: true }) : undefined;
  for (const root of roots) {
    const member = rootMember(root);
    // The configured root itself is always followed: pointing a job at a symlinked folder means its content.
    const stats = await stat(root.path);
    if (stats.isDirectory()) {
      yield { kind: 'directory', member, absolute: root.path, stats };
      yield* walkDirectory(root.path, member, '', [`${stats.dev}:${stats.ino}`], excluded, options);
    } else if (stats.isFile()) {
      yield { kind: 'file', member, absolute: root.path, stats };
    } else {
      options.warnings.add(`${root.path}: skipped, not a regular file or directory`);
    }
  }
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

async function* walkDirectory(
  directory: string,
  member: string,
  relative: string,
  ancestors: string[],
  excluded: ((path: string) => boolean) | undefined,
  options: WalkOptions,
): AsyncGenerator<ArchiveEntry> {
  // Only a refusal check (followed links, the host's local path rule) is asynchronous; without it the walk's calls are.
  const synchronous = !(options.followSymlinks && options.refusal);
  let names: string[];
  try {
    names = (synchronous ? readdirSync(directory) : await readdir(directory)).sort();
  } catch (error) {
    options.warnings.add(`${directory}: folder skipped, ${describeFileError(error)}`);
    return;
  }
  // The stats of the next names are asked for while this one is handled: each lstat is a round trip to libuv's thread
  // pool, and one at a time they were most of the time of a tree of small files (docs/benchmarks.md, "Many small files").
  const pathOf = (name: string) => (relative === '' ? name : `${relative}/${name}`);
  const isExcluded = (name: string) => excluded !== undefined && excluded(pathOf(name));
  // `join(directory, name)` without its normalizing of the whole path for every name (a name from readdir has no
  // slash and is never . or ..): it was the largest allocation of a walk (docs/benchmarks.md, 2026-12-07).
  const folder = normalize(directory);
  const base = folder.endsWith('/') ? folder : `${folder}/`;
  const ahead: Promise<Inspection>[] = [];
  let asked = 0;
  const askNext = () => {
    if (asked === names.length) return;
    const name = names[asked++]!;
    ahead.push(isExcluded(name) ? Promise.resolve({ excluded: true }) : inspect(base + name, options));
  };
  if (!synchronous) while (asked < Math.min(STAT_AHEAD, names.length)) askNext();
  for (const name of names) {
    let inspection: Inspection;
    if (synchronous) inspection = isExcluded(name) ? { excluded: true } : inspectSync(base + name, options);
    else {
      askNext();
      inspection = await ahead.shift()!;
    }
    if (options.signal.aborted) throw aborted('dump');
    if ('excluded' in inspection) continue;
    if ('warning' in inspection) {
      options.warnings.add(inspection.warning);
      continue;
    }
    const { stats } = inspection;
    const absolute = base + name;
    const entryMember = `${member}/${name}`;
    if (stats.isDirectory()) {
      const identity = `${stats.dev}:${stats.ino}`;
      if (ancestors.includes(identity)) {
        options.warnings.add(`${absolute}: skipped, symlink loop back to a parent folder`);
        continue;
      }
      yield { kind: 'directory', member: entryMember, absolute, stats };
      yield* walkDirectory(absolute, entryMember, pathOf(name), [...ancestors, identity], excluded, options);
    } else if (stats.isFile()) {
      yield { kind: 'file', member: entryMember, absolute, stats };
    } else if (stats.isSymbolicLink()) {
      try {
        yield { kind: 'symlink', member: entryMember, absolute, stats, linkTarget: synchronous ? readlinkSync(absolute) : await readlink(absolute) };
      } catch (error) {
        options.warnings.add(`${absolute}: skipped, ${describeFileError(error)}`);
      }
    } else if (stats.isSocket()) {
      // Sockets are endpoints of running programs, meaningless in a backup (GNU tar ignores them too).
      options.logger.debug({ path: absolute }, 'socket not archived');
    } else {
      options.warnings.add(`${absolute}: skipped, FIFOs and device files are not archived`);
    }
  }
}
