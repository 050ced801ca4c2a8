import { ArchiveChainError } from '../errors.js';
import { ExtractionTarget, type ExtractOptions, type ExtractSummary } from '../extract/extraction-target.js';
import { openMember } from '../reader/open-member.js';
import type { RangeReader } from '../reader/range.js';
import type { ResolvedEntry, Snapshot } from './resolve-snapshot.js';

/** Options of {@link restoreSnapshot}. */
export interface RestoreSnapshotOptions extends ExtractOptions {
  /** Restores only the entries it accepts (one file, a folder); everything when omitted. */
  include?: (path: string) => boolean;
}

/**
 * Restores a resolved snapshot (or part of it) with range reads: each file is read from the archive holding it,
 * touching only its own bytes. A hard link whose target is not selected is restored as a copy of the target.
 */
export async function restoreSnapshot(
  snapshot: Snapshot,
  rangeReaderFor: (archiveName: string) => RangeReader,
  targetDir: string,
  options: RestoreSnapshotOptions = {},
): Promise<ExtractSummary> {
  const include = options.include ?? (() => true);
  const byPath = new Map(snapshot.entries.map((entry) => [entry.path, entry]));
  const selected = snapshot.entries.filter((entry) => include(entry.path));
  const selectedPaths = new Set(selected.map((entry) => entry.path));
  const target = new ExtractionTarget(targetDir, options);
  const writeContent = (entry: ResolvedEntry, from: ResolvedEntry) =>
    target.file({ ...entry, kind: 'file' }, openMember(rangeReaderFor(from.archive), from));
  for (const entry of selected) {
    switch (entry.kind) {
      case 'directory':
        await target.directory(entry);
        break;
      case 'symlink':
        target.symlink(entry);
        break;
      case 'hardlink': {
        const linked = byPath.get(entry.target ?? '');
        if (!linked) throw new ArchiveChainError(`hard link "${entry.path}" points at "${entry.target}", which is not in the snapshot`);
        if (selectedPaths.has(linked.path)) target.hardlink(entry);
        else await writeContent({ ...entry, ...(linked.size !== undefined ? { size: linked.size } : {}) }, linked);
        break;
      }
      default:
        await writeContent(entry, entry);
    }
  }
  return target.finish();
}
