import { readFileSync, writeFileSync } from 'node:fs';

// The fake server's `.bak`: like a real one it starts with the Microsoft Tape Format "TAPE" block id (what the
// adapter checks before a restore upload); the rest is the fake's own layout, which only the fake reads back:
// "TAPE" + "HOLDFAST-FAKE-MSSQL-BAK\n" + uint32 BE header length + JSON header + the database's page bytes.

const MAGIC = Buffer.from('TAPEHOLDFAST-FAKE-MSSQL-BAK\n', 'latin1');

export interface FakeDatabaseFile {
  logicalName: string;
  physicalName: string;
  /** D data, L log (RESTORE FILELISTONLY's Type). */
  type: 'D' | 'L';
}

/** A database of the fake: its files, some rows, and opaque "pages" standing in for the data file's bytes. */
export interface FakeDatabase {
  name: string;
  state: string;
  files: FakeDatabaseFile[];
  rows: Record<string, unknown>[];
  pages: Buffer;
}

export interface BakHeader {
  databaseName: string;
  softwareVersionMajor: number;
  files: FakeDatabaseFile[];
  rows: Record<string, unknown>[];
}

export function writeBak(path: string, database: FakeDatabase, softwareVersionMajor: number, mode = 0o644): void {
  const header = Buffer.from(JSON.stringify({ databaseName: database.name, softwareVersionMajor, files: database.files, rows: database.rows } satisfies BakHeader));
  const length = Buffer.alloc(4);
  length.writeUInt32BE(header.length);
  writeFileSync(path, Buffer.concat([MAGIC, length, header, database.pages]), { mode });
}

/** Reads a `.bak`; throws when the file is missing (ENOENT) or is not one of the fake's (bad magic). */
export function readBak(path: string): { header: BakHeader; pages: Buffer } {
  return parseBak(readFileSync(path));
}

/** Decodes the bytes of a fake `.bak` (as a dump streamed them). */
export function parseBak(bytes: Buffer): { header: BakHeader; pages: Buffer } {
  if (!bytes.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error('not a backup file');
  const length = bytes.readUInt32BE(MAGIC.length);
  const start = MAGIC.length + 4;
  return { header: JSON.parse(bytes.subarray(start, start + length).toString('utf8')) as BakHeader, pages: bytes.subarray(start + length) };
}
