// SQLite source benchmark: `sqlite3 <db> .backup` (and `.backup` followed by gzip) against the adapter's dump + gzip,
// same file, same run. Needs the sqlite3 CLI and a built @holdfast/source-sqlite. Size: HOLDFAST_BENCH_SIZE_MB.
import 'reflect-metadata';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import definition from '@holdfast/source-sqlite';
import { log, report, run, sizeMiB, timeAdapter, timeShell } from './lib.mjs';

const rows = Math.round((sizeMiB() * 1024 * 1024) / 420);
const work = await mkdtemp(join(tmpdir(), 'hf-bench-sqlite-'));
try {
  const db = join(work, 'bench.sqlite');
  log(`seeding ${db} with ${rows} rows (~${sizeMiB()} MiB)`);
  await run('sqlite3', [
    db,
    `PRAGMA journal_mode=wal;
     CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT, body TEXT, blobby BLOB);
     WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${rows})
     INSERT INTO items SELECT x, 'item ' || x, printf('%.*c', 200, 'a') || hex(randomblob(32)), randomblob(64) FROM c;
     PRAGMA wal_checkpoint(TRUNCATE);`,
  ]);
  const fileBytes = (await stat(db)).size;
  log('baseline 1: sqlite3 .backup');
  const plain = await timeShell(`sqlite3 ${db} ".backup '${join(work, 'plain.sqlite')}'"`);
  log('baseline 2: sqlite3 .backup && gzip');
  const baseline = await timeShell(`sqlite3 ${db} ".backup '${join(work, 'gz.sqlite')}'" && gzip -c ${join(work, 'gz.sqlite')} > ${join(work, 'baseline.sqlite.gz')}`);
  log('adapter: @holdfast/source-sqlite dump | zlib gzip');
  const adapter = await timeAdapter(definition, { path: db, tempDirectory: work }, {}, join(work, 'adapter.sqlite.gz'));
  report('sqlite', { baseline: fileBytes, adapter: adapter.dumpBytes }, { label: 'sqlite3 .backup && gzip', ...baseline }, { label: 'source-sqlite + gzip', ...adapter }, {
    plainBackup: { seconds: plain.seconds, MiBs: fileBytes / 1024 / 1024 / plain.seconds, peakRssKiB: plain.peakRssKiB },
  });
  process.stdout.write(`sqlite3 .backup alone: ${plain.seconds.toFixed(2)} s, ${(fileBytes / 1024 / 1024 / plain.seconds).toFixed(1)} MiB/s (no compression)\n`);
} finally {
  await rm(work, { recursive: true, force: true });
}
