import { describe, expect, it } from 'vitest';
import { chainPosition, isSeekableBackup, pathsToRestore, restorableEntries, selectionKeyOf, type ArchiveEntry, type ArchiveListing } from '../src/archive-browser/archive-listing.js';
import { archiveCapabilitiesOf, fitArchiveOptions } from '../src/configuration/archive-options.js';

const entry = (path: string, kind: ArchiveEntry['kind'] = 'file', database: string | null = null): ArchiveEntry => ({
  path,
  kind,
  size: kind === 'directory' ? null : 10,
  mode: 0o644,
  mtime: '2026-11-19T10:05:09.000Z',
  target: null,
  database,
  archive: 'job_1.hfa',
});

const listing = (entries: ArchiveEntry[], chain: ArchiveListing['chain'] = null): ArchiveListing => ({
  file: 'job/job_1.hfa',
  createdAt: '2026-11-19T10:05:09.000Z',
  chain,
  requiredArchives: ['job_1.hfa'],
  deletions: [],
  renames: [],
  entries,
});

describe('archive browser helpers', () => {
  it('offers Browse for seekable backups only, encrypted or not', () => {
    expect(isSeekableBackup('job/a.hfa')).toBe(true);
    expect(isSeekableBackup('job/a.hfa.enc')).toBe(true);
    expect(isSeekableBackup('job/a.tar.zst')).toBe(false);
    expect(isSeekableBackup('job/a.hfa.index.json')).toBe(false);
  });

  it('names the chain position', () => {
    expect(chainPosition(listing([]))).toMatch(/^Standalone full backup/);
    expect(chainPosition(listing([], { id: 'c', sequence: 0, baseArchives: [] }))).toMatch(/^Full backup/);
    expect(chainPosition(listing([], { id: 'c', sequence: 2, baseArchives: ['a.hfa', 'b.hfa'] }))).toBe('Incremental 2 (after 2 earlier backups of its chain)');
  });

  it("hides Holdfast's own members of a directory archive, and offers only the dumps of a database archive by name", () => {
    const files = listing([entry('.holdfast/manifest.json'), entry('0-src', 'directory'), entry('0-src/a.txt')]);
    expect(restorableEntries(files).map((item) => item.path)).toEqual(['0-src', '0-src/a.txt']);
    const dumps = listing([entry('.holdfast/databases/shop.dump', 'database-dump', 'shop'), entry('globals.sql')]);
    expect(restorableEntries(dumps).map(selectionKeyOf)).toEqual(['shop']);
  });

  it('sends a selected folder without the paths below it', () => {
    expect(pathsToRestore(new Set(['0-src/docs/a.txt', '0-src/docs', '0-src/docs2/b.txt']))).toEqual(['0-src/docs', '0-src/docs2/b.txt']);
  });
});

describe('job archive options', () => {
  const types = [
    { adapterId: 'directory', type: 'database', capabilities: { fileArchive: true, seekableArchive: true } },
    { adapterId: 'postgres', type: 'database', capabilities: { fileArchive: false, seekableArchive: true } },
    { adapterId: 'mysql', type: 'database', capabilities: { fileArchive: false } },
  ];
  const chained = { archiveFormat: 'SEEKABLE' as const, fullEveryRuns: 7, fullEveryDays: 30 };

  it('keeps what the new source supports and resets the rest', () => {
    expect(fitArchiveOptions(chained, archiveCapabilitiesOf(types, 'directory'))).toEqual(chained);
    expect(fitArchiveOptions(chained, archiveCapabilitiesOf(types, 'postgres'))).toEqual({ archiveFormat: 'SEEKABLE', fullEveryRuns: null, fullEveryDays: null });
    expect(fitArchiveOptions(chained, archiveCapabilitiesOf(types, 'mysql'))).toEqual({ archiveFormat: 'PLAIN', fullEveryRuns: null, fullEveryDays: null });
    expect(fitArchiveOptions({ ...chained, archiveFormat: 'PLAIN' }, archiveCapabilitiesOf(types, 'directory'))).toEqual({ archiveFormat: 'PLAIN', fullEveryRuns: null, fullEveryDays: null });
  });
});
