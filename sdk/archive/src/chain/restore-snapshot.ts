import { ArchiveChainError } from '../errors.js';
import { ExtractionTarget, type ExtractOptions, type ExtractSummary } from '../extract/extraction-target.js';
import { CoalescedReads, type PlannedRead } from '../reader/coalesced-reads.js';
import { DATA_KINDS, openMember } from '../reader/open-member.js';
import type { RangeReader } from '../reader/range.js';
import type { ResolvedEntry, Snapshot } from './resolve-snapshot.js';

/** Options of {@link restoreSnapshot}. */
export interface RestoreSnapshotOptions extends ExtractOptions {
  /** Restores only the entries it accepts (one file, a folder); everything when omitted. Called with archive paths. */
  include?: (path: string) => boolean;
  /**
   * Where an included archive path lands below `targetDir` (for example without its top folder, when a root goes back
   * to its original place); the archive path itself when omitted. Hard link targets are mapped the same way.
   */
  mapPath?: (path: string) => string;
}

/**
 * Restores a resolved snapshot (or part of it) with range reads: each file is read from the archive holding it,
 * touching only its own bytes (files that lie one after the other share one range read: CoalescedReads), and checked
 * against the index's size and SHA-256 as it is read (so the summary's `sha256` map stays empty: holding a second
 * digest per file would only cost memory). A hard link whose target is not selected is restored as a copy of the
 * target. Members the containment rule refuses (symlinks that lead outside, anything below a symlink of the archive)
 * are skipped and named in the summary's `warnings`, as are members restored without setuid/setgid/sticky bits.
 * Nothing is held per entry beyond the snapshot itself, except the entries hard links point at.
 */
export async function restoreSnapshot(
  snapshot: Snapshot,
  rangeReaderFor: (archiveName: string) => RangeReader,
  targetDir: string,
  options: RestoreSnapshotOptions = {},
): Promise<ExtractSummary> {
  const include = options.include ?? (() => true);
  const mapPath = options.mapPath ?? ((path: string) => path);
  const { entries } = snapshot;
  const linkTargets = hardLinkTargets(entries, include);
  const target = new ExtractionTarget(targetDir, { ...options, recordDigests: false });
  const plannedAt = (index: number): PlannedRead | undefined => {
    const entry = entries[index] as ResolvedEntry;
    return DATA_KINDS.has(entry.kind) && include(entry.path) ? entry : undefined;
  };
  const reads = new CoalescedReads(rangeReaderFor, plannedAt, entries.length);
  const writeContent = (entry: ResolvedEntry, from: ResolvedEntry, reader: RangeReader) =>
    target.file({ ...entry, path: mapPath(entry.path), kind: 'file' }, openMember(reader, from));
  try {
    for (const [index, entry] of entries.entries()) {
      if (!include(entry.path)) continue;
      switch (entry.kind) {
        case 'directory':
          await target.directory({ ...entry, path: mapPath(entry.path) });
          break;
        case 'symlink':
          target.symlink({ ...entry, path: mapPath(entry.path) });
          break;
        case 'hardlink': {
          const linked = linkTargets.get(entry.target ?? '');
          if (!linked) throw new ArchiveChainError(`hard link "${entry.path}" points at "${entry.target}", which is not in the snapshot`);
          if (include(linked.path)) target.hardlink({ ...entry, path: mapPath(entry.path), target: mapPath(linked.path) });
          // A copy of a target that was not selected: it lies elsewhere in the archive, so it gets a range read of its own.
          else await writeContent({ ...entry, ...(linked.size !== undefined ? { size: linked.size } : {}) }, linked, rangeReaderFor(linked.archive));
          break;
        }
        default:
          await writeContent(entry, entry, reads.readerFor(index));
      }
    }
  } finally {
    reads.close();
  }
  return target.finish();
}

/** The entries that included hard links point at, by path (only those: a map of every path costs megabytes). */
function hardLinkTargets(entries: readonly ResolvedEntry[], include: (path: string) => boolean): Map<string, ResolvedEntry> {
  const wanted = new Set<string>();
  for (const entry of entries) {
    if (entry.kind === 'hardlink' && include(entry.path)) wanted.add(entry.target ?? '');
  }
  const found = new Map<string, ResolvedEntry>();
  if (wanted.size === 0) return found;
  for (const entry of entries) {
    if (wanted.has(entry.path)) found.set(entry.path, entry);
  }
  return found;
}
