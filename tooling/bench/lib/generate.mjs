// Test data of a chosen size: a PostgreSQL database of plain rows, and a directory of mixed files (half random
// bytes, half text) so compression does real work on both.
import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import { psql } from './measure.mjs';

/** Creates `name` and fills it until `pg_database_size` reaches `bytes`; answers the final size. */
export async function generatePostgres(name, bytes) {
  await psql('postgres', `DROP DATABASE IF EXISTS "${name}"`);
  await psql('postgres', `CREATE DATABASE "${name}"`);
  await psql(name, 'CREATE TABLE bench_rows (id bigint PRIMARY KEY, created_at timestamptz NOT NULL, name text NOT NULL, payload text NOT NULL)');
  const batch = 200_000; // about 60 MB of table per batch
  for (let offset = 0; ; offset += batch) {
    const size = Number(await psql(name, `SELECT pg_database_size(current_database())`));
    if (size >= bytes) return size;
    await psql(
      name,
      `INSERT INTO bench_rows SELECT g, now() - (g || ' seconds')::interval, 'customer ' || (g % 9973), md5(g::text) || repeat(md5((g * 7)::text), 3) || (random() * 1e9)::bigint FROM generate_series(${offset + 1}, ${offset + batch}) g`,
    );
  }
}

/** Writes files of 8 MiB (random and text alternating) under `dir` until `bytes` are written. */
export async function generateDirectory(dir, bytes) {
  const fileSize = 8 * 1024 * 1024;
  let written = 0;
  for (let index = 0; written < bytes; index += 1) {
    const sub = join(dir, `part-${Math.floor(index / 32)}`);
    await mkdir(sub, { recursive: true });
    const size = Math.min(fileSize, bytes - written);
    const isText = index % 2 === 1;
    async function* chunks() {
      for (let left = size; left > 0; left -= 65536) {
        const length = Math.min(65536, left);
        if (!isText) yield randomBytes(length);
        else yield Buffer.from(`${index} line ${left} of a log file with some repeated words and ${randomBytes(8).toString('hex')}\n`.repeat(Math.ceil(length / 60)).slice(0, length));
      }
    }
    await pipeline(Readable.from(chunks()), createWriteStream(join(sub, isText ? `file-${index}.log` : `file-${index}.bin`)));
    written += size;
  }
  return written;
}

/**
 * Writes a tree of small files under `dir` until `bytes` are written: sizes spread evenly from 0 to 24 KiB (12 KiB on
 * average, like a source tree or `node_modules`), alternately log-like text and random bytes, 100 files a folder in
 * folders two levels deep. Answers the number of files.
 */
export async function generateSmallFiles(dir, bytes) {
  let written = 0;
  let index = 0;
  for (; written < bytes; index += 1) {
    const sub = join(dir, `group-${Math.floor(index / 10_000)}`, `folder-${Math.floor(index / 100) % 100}`);
    if (index % 100 === 0) await mkdir(sub, { recursive: true });
    // A fixed spread of sizes (no random generator needed for the sizes themselves): 0, 245, 490, ... 24,255 bytes.
    const size = Math.min((index * 245) % 24_500, bytes - written);
    const content =
      index % 2 === 0
        ? randomBytes(size)
        : Buffer.from(`${index} request served in ${index % 977} ms for ${randomBytes(6).toString('hex')} with status ok\n`.repeat(Math.ceil(size / 70) + 1)).subarray(0, size);
    await writeFile(join(sub, index % 2 === 0 ? `blob-${index}.bin` : `entry-${index}.log`), content);
    written += size;
  }
  return index;
}
