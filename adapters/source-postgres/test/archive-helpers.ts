import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { isAdapterError, readIndex, resolveSnapshot, type Compression, type IndexEntry, type RangeReader, type Snapshot, type ArchiveDumpRequest, type ArchiveRestoreInput, type SourceAdapter } from '@holdfast/sdk';
import { childCommands, sql } from './helpers.js';

/** The archive request of the tests: a standalone archive named `pg.hfa`. */
export const request = (compression: Compression, overrides: Partial<ArchiveDumpRequest> = {}): ArchiveDumpRequest => ({
  archiveName: 'pg.hfa',
  createdAt: new Date('2026-03-01T12:00:00Z'),
  compression,
  chain: null,
  ...overrides,
});

/** Range reads of a local file, as storage would answer them. */
export const fileRangeReader = (path: string): RangeReader => async (start, end) => createReadStream(path, { start, end });

/** Dumps in archive mode to a file in `dir` and reads its index back from the file's tail. */
export async function dumpToFile(adapter: SourceAdapter, databases: string[], compression: Compression, dir: string) {
  const path = join(dir, `${randomBytes(4).toString('hex')}.hfa`);
  const dump = await adapter.dump({ databases, signal: new AbortController().signal, archive: request(compression) });
  await pipeline(dump.stream, createWriteStream(path));
  const stats = await dump.done;
  const size = (await stat(path)).size;
  const index = await readIndex({ rangeReader: fileRangeReader(path), archiveSize: size });
  return { path, size, stats, index, snapshot: resolveSnapshot([index]), extension: dump.extension };
}

/** The restore input of an archive file; any other archive name is a test failure. */
export function restoreInput(path: string, snapshot: Snapshot, include?: string[]): ArchiveRestoreInput {
  return {
    snapshot,
    rangeReaderFor: (name) => {
      if (name !== 'pg.hfa') throw new Error(`unexpected archive ${name}`);
      return fileRangeReader(path);
    },
    ...(include ? { include } : {}),
  };
}

export const dumpsOf = (entries: readonly IndexEntry[]) => entries.filter((entry) => entry.kind === 'database-dump');
export const codeOf = (error: unknown) => (isAdapterError(error) ? error.code : `not an AdapterError: ${String(error)}`);
export const pgDumps = async () => (await childCommands()).filter((command) => command.includes('pg_dump'));

/** Waits (up to 5 s) until a pg_dump of this adapter has a session on `name`. */
export async function sessionOn(name: string): Promise<boolean> {
  for (let i = 0; i < 200; i++) {
    const rows = await sql('postgres', `SELECT 1 FROM pg_stat_activity WHERE datname = $1 AND application_name = 'holdfast'`, [name]);
    if (rows.length > 0) return true;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return false;
}

/** The pg_dump children still running after up to 2.5 s. */
export async function noPgDumpLeft(): Promise<string[]> {
  for (let i = 0; i < 50 && (await pgDumps()).length > 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
  return pgDumps();
}
