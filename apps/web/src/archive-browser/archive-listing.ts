import type { paths } from '@holdfast/client';

/** What `GET /api/storage/{id}/archive` answers: the snapshot a seekable archive (with its chain) holds. */
export type ArchiveListing = paths['/api/storage/{id}/archive']['get']['responses'][200]['content']['application/json'];
export type ArchiveEntry = ArchiveListing['entries'][number];
/** The body of `POST /api/storage/{id}/restore`. */
export type RestoreBody = paths['/api/storage/{id}/restore']['post']['requestBody']['content']['application/json'];

/** Holdfast's own members (manifest, index, trailer) share this prefix; database dumps sit below it too. */
const RESERVED_PREFIX = '.holdfast/';

/** Seekable backups are named `.hfa`, or `.hfa.enc` once encrypted (docs/formats/archive.md). */
export function isSeekableBackup(path: string): boolean {
  return path.endsWith('.hfa') || path.endsWith('.hfa.enc');
}

/** The last segment of a storage path: chain members are named by the server the same way, full path or not. */
export function baseName(path: string): string {
  return path.split('/').pop() ?? path;
}

/** A database archive is restored by database name; a directory archive by archive path. */
export function isDatabaseArchive(listing: ArchiveListing): boolean {
  return listing.entries.some((entry) => entry.kind === 'database-dump');
}

/**
 * The entries a person can pick. Holdfast's bookkeeping members cannot be restored on their own (the directory
 * source refuses them), so they are hidden; a database archive offers only its dumps.
 */
export function restorableEntries(listing: ArchiveListing): ArchiveEntry[] {
  if (isDatabaseArchive(listing)) return listing.entries.filter((entry) => entry.kind === 'database-dump' && entry.database);
  return listing.entries.filter((entry) => !entry.path.startsWith(RESERVED_PREFIX));
}

/** What the restore request names for an entry: database archives select by database name. */
export function selectionKeyOf(entry: ArchiveEntry): string {
  return entry.kind === 'database-dump' && entry.database ? entry.database : entry.path;
}

/** "Full backup", "Incremental 2 of chain …" or "Standalone full backup", for the chain summary. */
export function chainPosition(listing: ArchiveListing): string {
  if (!listing.chain) return 'Standalone full backup (no incremental chain)';
  if (listing.chain.sequence === 0) return 'Full backup (start of an incremental chain)';
  return `Incremental ${listing.chain.sequence} (after ${listing.chain.baseArchives.length} earlier ${listing.chain.baseArchives.length === 1 ? 'backup' : 'backups'} of its chain)`;
}

/** True when `path` lies below the folder `folder` (not the folder itself). */
export function isBelow(path: string, folder: string): boolean {
  return path.startsWith(`${folder.replace(/\/+$/, '')}/`);
}

/** The selected folder that already brings `path` along, if any: a folder restores everything below it. */
export function coveringFolder(path: string, selected: ReadonlySet<string>): string | undefined {
  for (const folder of selected) if (isBelow(path, folder)) return folder;
  return undefined;
}

/** The paths to send: a path below a selected folder is dropped, the folder restores it anyway. */
export function pathsToRestore(selected: ReadonlySet<string>): string[] {
  return [...selected].filter((path) => !coveringFolder(path, selected)).sort();
}

/** Case-insensitive match of the filter text against the path (and the database name of a dump). */
export function matchesFilter(entry: ArchiveEntry, filter: string): boolean {
  const wanted = filter.trim().toLowerCase();
  if (!wanted) return true;
  return entry.path.toLowerCase().includes(wanted) || (entry.database?.toLowerCase().includes(wanted) ?? false);
}
