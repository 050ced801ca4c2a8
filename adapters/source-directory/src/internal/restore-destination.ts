import { basename, dirname, resolve } from 'node:path';
import { AdapterError, type RestoreTarget } from '@holdfast/sdk';
import { DIRECTORY_ORIGIN } from './errors.js';

/** Where one archive member is written: below `root`, at `relative` (empty for the root itself). */
export interface MemberLocation {
  root: string;
  relative: string;
}

/**
 * Where a restore writes: below one folder (`target.path`), or every archived root back at the path it was read
 * from (`target.originalPaths`). Member names are `<index>-<name>/...` (see the README's archive layout); the index
 * is the root's position in the source's `paths`, so it still maps after a job dumped only some of them.
 */
export type RestoreDestination = { kind: 'folder'; path: string } | { kind: 'original'; roots: readonly string[] };

/** Picks the destination of a restore; one of `path` and `originalPaths` is required, never both. */
export function restoreDestination(target: RestoreTarget, configuredPaths: readonly string[]): RestoreDestination {
  if (target.path && target.originalPaths) {
    throw new AdapterError(DIRECTORY_ORIGIN, 'CONFIG', 'restore takes either target.path or target.originalPaths, not both');
  }
  if (target.originalPaths) return { kind: 'original', roots: configuredPaths.map((path) => resolve(path)) };
  if (!target.path) {
    throw new AdapterError(DIRECTORY_ORIGIN, 'CONFIG', 'restore needs target.path (the folder to extract into) or target.originalPaths (put files back where they were)');
  }
  if (!target.path.startsWith('/')) throw new AdapterError(DIRECTORY_ORIGIN, 'CONFIG', 'target.path must be absolute');
  return { kind: 'folder', path: resolve(target.path) };
}

/**
 * Maps a safe member path to its location, or the reason it is refused. In `original` mode the first segment must
 * be `<index>-<name>` of a configured root; a top-level file member is a single-file root and lands on that path.
 */
export function locateMember(destination: RestoreDestination, memberPath: string, isDirectory: boolean, folderRoot: string): MemberLocation | { refused: string } {
  if (destination.kind === 'folder') return { root: folderRoot, relative: memberPath };
  const [top, ...rest] = memberPath.split('/');
  const index = /^(\d+)-/.exec(top ?? '')?.[1];
  const original = index === undefined ? undefined : destination.roots[Number(index)];
  if (original === undefined) return { refused: `no configured path for archive root "${top}"` };
  if (rest.length > 0 || isDirectory) return { root: original, relative: rest.join('/') };
  return { root: dirname(original), relative: basename(original) };
}
