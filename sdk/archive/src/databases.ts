import { ArchiveInputError } from './errors.js';
import type { ArchiveIndex, IndexEntry } from './format/index-schema.js';

/** The database dumps of an index, in archive order. */
export function databaseDumps(index: Pick<ArchiveIndex, 'entries'>): IndexEntry[] {
  return index.entries.filter((entry) => entry.kind === 'database-dump');
}

/**
 * The dump of one database. Throws an ArchiveInputError naming the archive's databases when `name` is not one of
 * them, so an API can answer 400 with the choices.
 */
export function findDatabaseDump(index: Pick<ArchiveIndex, 'entries'>, name: string): IndexEntry {
  const dumps = databaseDumps(index);
  const found = dumps.find((entry) => entry.database === name);
  if (found) return found;
  const names = dumps.map((entry) => JSON.stringify(entry.database)).join(', ');
  throw new ArchiveInputError(`database "${name}" is not in this archive; it holds ${names || 'no database dumps'}`);
}

/**
 * The dump a decrypted download of a seekable archive resolves to (SPEC download rules): the one named by `database`,
 * or the only dump when the archive holds exactly one and no files. Otherwise an ArchiveInputError says why.
 */
export function selectDownloadDump(index: Pick<ArchiveIndex, 'entries'>, database?: string): IndexEntry {
  if (database !== undefined) return findDatabaseDump(index, database);
  const dumps = databaseDumps(index);
  const hasFiles = index.entries.some((entry) => entry.kind !== 'database-dump');
  if (dumps.length === 1 && !hasFiles) return dumps[0] as IndexEntry;
  const names = dumps.map((entry) => JSON.stringify(entry.database)).join(', ');
  if (dumps.length === 0) throw new ArchiveInputError('this archive holds files and no database dump; download it without decrypting or restore files');
  throw new ArchiveInputError(
    `this archive holds ${hasFiles ? 'files and ' : ''}${dumps.length === 1 ? 'the database' : 'the databases'} ${names}; name one in "database"`,
  );
}
