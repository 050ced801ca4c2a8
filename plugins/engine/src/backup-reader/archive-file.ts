import { ConflictError, ValidationError } from '@holdfast/kernel';
import type { ResolvedEntry, Snapshot } from '@holdfast/archive';

/** One file of a snapshot to download: the entry whose bytes are read, and the name and size to send. */
export interface ArchiveFileChoice {
  /** The member holding the content: the file itself, or the file a hard link resolves to. */
  member: ResolvedEntry;
  fileName: string;
  size: number;
}

/**
 * The file `path` names in a seekable archive's snapshot, for a single-file download. Folders, symlinks and paths the
 * snapshot does not hold are refused with a ValidationError saying what to do instead (so a download URL is never
 * issued for them); a hard link resolves to its target's content. `backupName` only names the backup in messages.
 */
export function selectArchiveFile(snapshot: Snapshot, path: string, backupName: string): ArchiveFileChoice {
  const byPath = new Map(snapshot.entries.map((entry) => [entry.path, entry]));
  // A folder copied from a listing may come with a trailing slash; the index records paths without one.
  const entry = byPath.get(path) ?? byPath.get(path.replace(/\/+$/, ''));
  if (!entry) {
    throw new ValidationError(`path: "${path}" is not in the snapshot of "${backupName}"; list its files with GET /api/storage/:id/archive?file=`);
  }
  switch (entry.kind) {
    case 'directory':
      throw new ValidationError(`path: "${entry.path}" is a folder: a folder cannot be downloaded as one file; restore it with POST /api/storage/:id/restore and paths`);
    case 'symlink':
      throw new ValidationError(`path: "${entry.path}" is a symbolic link (to "${entry.target ?? ''}"), which has no content of its own; download the file it points at`);
    case 'hardlink': {
      const linked = byPath.get(entry.target ?? '');
      if (!linked || linked.kind !== 'file') {
        throw new ConflictError(`hard link "${entry.path}" of "${backupName}" points at "${entry.target ?? ''}", which is not a file of the snapshot`);
      }
      return { member: linked, fileName: lastSegment(entry.path), size: linked.size ?? 0 };
    }
    default:
      return { member: entry, fileName: lastSegment(entry.path), size: entry.size ?? 0 };
  }
}

/** The download's file name: the path's last segment (archive paths use `/`). */
function lastSegment(path: string): string {
  return path.split('/').filter(Boolean).pop() ?? path;
}
