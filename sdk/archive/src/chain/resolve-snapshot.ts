import { ArchiveChainError } from '../errors.js';
import type { ArchiveIndex, IndexEntry } from '../format/index-schema.js';

/** An index entry with the archive that holds its data always named. */
export type ResolvedEntry = IndexEntry & { archive: string };

/** The whole snapshot of a chain's latest index, with every entry pointing at the archive holding its data. */
export interface Snapshot {
  chainId: string | null;
  sequence: number;
  archiveName: string;
  /** Every archive a full restore of this snapshot reads, oldest first. */
  requiredArchives: string[];
  entries: ResolvedEntry[];
  deletions: string[];
  renames: { from: string; to: string }[];
}

/**
 * Resolves the snapshot described by the newest of `indexes` (the chain's indexes in any order, each read with
 * readIndex). Checks that the chain is complete (sequences 0..n, the same chain id, matching base archive names), that
 * every reference points at a member really stored in the named archive, and that each step's deletions and renames
 * explain how its paths differ from the step before. Any gap throws ArchiveChainError: the caller should then
 * run a full backup instead of trusting the chain.
 *
 * The snapshot's entries are copies of the newest index's, each with `archive` filled in. With `reuseEntries`, a
 * caller that read the indexes for this call only gets the newest index's own entry objects instead, filled in
 * place (for 50,000 files a copy is another 30 MiB). An entry whose `archive` names its own archive counts as stored
 * there, so indexes resolved that way can still be resolved again.
 */
export function resolveSnapshot(indexes: ArchiveIndex[], options: { reuseEntries?: boolean } = {}): Snapshot {
  if (indexes.length === 0) throw new ArchiveChainError('no index given');
  const ordered = [...indexes].sort((a, b) => (a.chain?.sequence ?? 0) - (b.chain?.sequence ?? 0));
  const names = ordered.map((index, position) => checkLink(index, position, ordered));
  for (let position = 1; position < ordered.length; position += 1) {
    checkStep(ordered[position - 1] as ArchiveIndex, ordered[position] as ArchiveIndex, names[position] as string);
  }
  const latest = ordered[ordered.length - 1] as ArchiveIndex;
  const latestName = names[names.length - 1] as string;
  // Members stored in each archive by offset, built only for archives that entries point at by name (an entry
  // without `archive` is stored in the newest archive by definition).
  const storedByArchive = new Map<string, Map<number, IndexEntry>>();
  const storedIn = (archive: string) => {
    let stored = storedByArchive.get(archive);
    if (!stored) {
      const index = ordered[names.indexOf(archive)];
      stored = new Map((index?.entries ?? []).filter((entry) => isStoredIn(entry, archive)).map((entry) => [entry.offset, entry]));
      storedByArchive.set(archive, stored);
    }
    return stored;
  };
  const used = new Set<string>();
  for (const entry of latest.entries) {
    if (isStoredIn(entry, latestName)) {
      used.add(latestName);
      continue;
    }
    const archive = entry.archive as string;
    const stored = storedIn(archive).get(entry.offset);
    if (!stored || stored.kind !== entry.kind || stored.sha256 !== entry.sha256) {
      throw new ArchiveChainError(`"${entry.path}" references byte ${entry.offset} of "${archive}", which holds no such member`);
    }
    used.add(archive);
  }
  let entries: ResolvedEntry[];
  if (options.reuseEntries) {
    // Only now, after every check: the lookups above must see the newest index as it was read.
    for (const entry of latest.entries) entry.archive ??= latestName;
    entries = latest.entries as ResolvedEntry[];
  } else {
    entries = latest.entries.map((entry): ResolvedEntry => ({ ...entry, archive: entry.archive ?? latestName }));
  }
  return {
    chainId: latest.chain?.id ?? null,
    sequence: latest.chain?.sequence ?? 0,
    archiveName: latestName,
    requiredArchives: names.filter((name) => used.has(name)),
    entries,
    deletions: latest.deletions,
    renames: latest.renames,
  };
}

/** True when the entry's data is in `archive` itself (no `archive` field, or one naming that archive). */
function isStoredIn(entry: IndexEntry, archive: string): boolean {
  return entry.archive === undefined || entry.archive === archive;
}

function checkLink(index: ArchiveIndex, position: number, ordered: ArchiveIndex[]): string {
  const name = index.archiveName;
  if (!name) throw new ArchiveChainError(`the index at position ${position} has no archiveName; chained archives need one`);
  if (ordered.length === 1 && !index.chain) return name;
  const first = ordered[0]?.chain;
  if (!index.chain || !first || index.chain.id !== first.id) {
    throw new ArchiveChainError(`"${name}" does not belong to chain ${first?.id ?? '(none)'}`);
  }
  if (index.chain.sequence !== position) {
    throw new ArchiveChainError(`chain ${first.id} is missing sequence ${position} (found ${index.chain.sequence} in "${name}")`);
  }
  const expectedBases = ordered.slice(0, position).map((earlier) => earlier.archiveName);
  if (index.chain.baseArchives.join('\n') !== expectedBases.join('\n')) {
    throw new ArchiveChainError(`"${name}" was built on [${index.chain.baseArchives.join(', ')}], not [${expectedBases.join(', ')}]`);
  }
  return name;
}

// Every path of the previous snapshot must still be there, be deleted, or be renamed; every new path must be stored
// in this archive or be a rename's destination.
function checkStep(previous: ArchiveIndex, current: ArchiveIndex, name: string): void {
  const before = new Set(previous.entries.map((entry) => entry.path));
  const after = new Map(current.entries.map((entry) => [entry.path, entry]));
  const deleted = new Set(current.deletions);
  const renamedFrom = new Set(current.renames.map((rename) => rename.from));
  const renamedTo = new Set(current.renames.map((rename) => rename.to));
  for (const path of before) {
    if (after.has(path) || deleted.has(path) || renamedFrom.has(path)) continue;
    throw new ArchiveChainError(`"${path}" disappeared in "${name}" without a recorded deletion or rename`);
  }
  for (const path of deleted) {
    if (after.has(path)) throw new ArchiveChainError(`"${path}" is recorded as deleted in "${name}" but is still in its index`);
  }
  for (const [path, entry] of after) {
    if (before.has(path) || isStoredIn(entry, name) || renamedTo.has(path)) continue;
    throw new ArchiveChainError(`"${path}" is new in "${name}" but references "${entry.archive}" without a recorded rename`);
  }
}
