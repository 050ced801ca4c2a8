import { basename, dirname, join } from 'node:path';
import {
  AdapterError,
  RestoreStaging,
  restoreSnapshot,
  type ArchiveRestoreInput,
  type ExtractSummary,
  type ResolvedEntry,
  type RestoreResult,
  type Snapshot,
} from '@holdfast/sdk';
import { DIRECTORY_ORIGIN, aborted, refusedReplacing, toAdapterError } from './errors.js';
import type { RestoreDestination } from './restore-destination.js';
import type { TarRestoreOptions } from './restore.js';
import { WarningList } from './warnings.js';

/** True when `path` is one of the requested paths or lies below one of them. */
export function selects(include: readonly string[] | undefined, path: string): boolean {
  if (!include || include.length === 0) return true;
  return include.some((wanted) => path === wanted || path.startsWith(`${wanted.replace(/\/+$/, '')}/`));
}

/**
 * Restores (part of) a seekable archive snapshot: below one folder with the archive's own paths, or each archived
 * root back at its configured path. Files are read with range reads, each from the archive of the chain that holds it,
 * into a staging folder inside each target under the containment rule (refused members become warnings), and moved
 * into place only when every one of them matched its index: a failed restore leaves the targets as they were.
 */
export async function restoreArchiveSnapshot(
  input: ArchiveRestoreInput,
  destination: RestoreDestination,
  signal: AbortSignal,
  options: TarRestoreOptions,
): Promise<RestoreResult> {
  // The kernel carries the snapshot opaquely; it is the archive library's Snapshot the engine resolved.
  const snapshot = input.snapshot as Snapshot;
  const entries = snapshot.entries.filter((entry) => !entry.path.startsWith('.holdfast/'));
  const unknown = (input.include ?? []).filter((wanted) => !entries.some((entry) => selects([wanted], entry.path)));
  if (unknown.length > 0) {
    throw new AdapterError(DIRECTORY_ORIGIN, 'CONFIG', `not in this backup: ${unknown.join(', ')} (list the backup's files to see its paths)`);
  }
  const include = (path: string) => selects(input.include, path) || isAncestor(path, input.include);
  const staging = new RestoreStaging();
  const warnings = new WarningList();
  const restoredFolders = new Set<string>();
  const extractOptions = { restoreOwnership: options.keepSpecialModes, keepSpecialModes: options.keepSpecialModes };
  const collect = (stagingDir: string, summary: ExtractSummary) => {
    for (const warning of summary.warnings) warnings.add(warning);
    for (const path of summary.directoryPaths) restoredFolders.add(join(stagingDir, path));
  };
  try {
    if (destination.kind === 'folder') {
      const stagingDir = await staging.folderFor(destination.path);
      collect(stagingDir, await restoreSnapshot({ ...snapshot, entries }, input.rangeReaderFor, stagingDir, { include, ...extractOptions }));
    } else {
      for (const [index, original] of destination.roots.entries()) {
        const rooted = rebase(entries, index, original);
        if (!rooted) continue;
        const stagingDir = await staging.folderFor(rooted.targetDir);
        const summary = await restoreSnapshot({ ...snapshot, entries }, input.rangeReaderFor, stagingDir, {
          include: (path) => rooted.contains(path) && include(path),
          mapPath: rooted.mapPath,
          ...extractOptions,
        });
        collect(stagingDir, summary);
      }
    }
    if (signal.aborted) throw aborted('restore');
    const problems = await staging
      .commit({ isRestoredDirectory: (path) => restoredFolders.has(path), restoreOwnership: options.keepSpecialModes, refuseReplacing: options.refuseReplacing === true })
      .catch(refusedReplacing);
    for (const problem of problems) warnings.add(problem);
  } catch (error) {
    await staging.discard();
    if (signal.aborted) throw aborted('restore');
    if (error instanceof AdapterError) throw error;
    throw toAdapterError(error, 'restore of the archive failed');
  }
  return { warnings: warnings.list() };
}

/** Folders above a selected path are restored too (without their other content), so the path has its parents' modes. */
function isAncestor(path: string, include: readonly string[] | undefined): boolean {
  return (include ?? []).some((wanted) => wanted.startsWith(`${path}/`));
}

/**
 * Where root `index` is restored, and which archive paths it holds: a folder root's members lose the
 * `<index>-<name>/` prefix; a single-file root lands at its original file name in its original folder. Paths are mapped
 * as they are restored, not by copying the entries (a copy of 50,000 entries is 30 MiB).
 */
function rebase(entries: readonly ResolvedEntry[], index: number, original: string): { targetDir: string; contains(path: string): boolean; mapPath(path: string): string } | undefined {
  const rootName = new RegExp(`^${index}-[^/]*$`);
  const prefix = entries.find((entry) => rootName.test(entry.path));
  if (!prefix) return undefined;
  if (prefix.kind !== 'directory') {
    const name = basename(original);
    return { targetDir: dirname(original), contains: (path) => path === prefix.path, mapPath: () => name };
  }
  const head = `${prefix.path}/`;
  return { targetDir: original, contains: (path) => path.startsWith(head), mapPath: (path) => path.slice(head.length) };
}
