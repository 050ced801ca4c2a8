// MariaDB/MySQL source benchmark: `mariadb-dump ... | gzip` against the adapter's dump + gzip, same database, same
// run. Needs the local MariaDB (root, empty password) and a built @holdfast/source-mysql. Size: HOLDFAST_BENCH_SIZE_MB.
import 'reflect-metadata';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import definition from '@holdfast/source-mysql';
import { log, report, run, sizeMiB, timeAdapter, timeShell } from './lib.mjs';

const DB = 'hf_bench_mysql';
const mysql = (sql) => run('mariadb', ['-h127.0.0.1', '-uroot', '--batch', '--skip-column-names', '-e', sql]);

const rows = Math.round((sizeMiB() * 1024 * 1024) / 330);
const work = await mkdtemp(join(tmpdir(), 'hf-bench-mysql-'));
try {
  log(`seeding ${DB} with ${rows} rows (~${sizeMiB()} MiB of dump)`);
  await mysql(`DROP DATABASE IF EXISTS ${DB}; CREATE DATABASE ${DB}`);
  await mysql(`CREATE TABLE ${DB}.items (id INT PRIMARY KEY, name VARCHAR(100), body TEXT, blobby VARBINARY(100)) ENGINE=InnoDB`);
  for (let start = 1; start <= rows; start += 200_000) {
    const end = Math.min(rows, start + 199_999);
    await mysql(
      `INSERT INTO ${DB}.items SELECT seq, CONCAT('item ', seq), CONCAT(SHA2(seq, 256), ' ', REPEAT(MD5(seq), 4)), RANDOM_BYTES(64) FROM ${DB}.seq_${start}_to_${end}`,
    );
  }
  log('baseline: mariadb-dump | gzip');
  const baselineOut = join(work, 'baseline.sql.gz');
  const flags = '--single-transaction --quick --routines --events --triggers --hex-blob --default-character-set=utf8mb4';
  const baseline = await timeShell(`mariadb-dump -h127.0.0.1 -uroot ${flags} ${DB} | gzip > ${baselineOut}`);
  const baselineBytes = Number((await run('sh', ['-c', `gzip -dc ${baselineOut} | wc -c`])).trim());
  log('adapter: @holdfast/source-mysql dump | zlib gzip');
  const adapter = await timeAdapter(definition, { host: '127.0.0.1', user: 'root' }, { databases: [DB] }, join(work, 'adapter.sql.gz'));
  report('mysql', { baseline: baselineBytes, adapter: adapter.dumpBytes }, { label: 'mariadb-dump | gzip', ...baseline }, { label: 'source-mysql + gzip', ...adapter });
} finally {
  await mysql(`DROP DATABASE IF EXISTS ${DB}`).catch(() => undefined);
  await rm(work, { recursive: true, force: true });
}
