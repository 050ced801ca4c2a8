// The sources of the benchmark table (table.mjs) and, for each, what a Holdfast run and the shell pipeline it is
// compared with do to it: PostgreSQL and MariaDB databases generated at the bench size (dropped afterwards), folders
// (generated, or the repository's node_modules read in place). Every restore goes into a fresh database or folder,
// removed when the run ends.
import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { generateDirectory, generatePostgres, generateSmallFiles } from './generate.mjs';
import { bytesUnder, psql, run } from './measure.mjs';

const PG = `-h 127.0.0.1 -U ${process.env.PGUSER ?? 'root'}`;
const MARIADB = '-h127.0.0.1 -P3306 -uroot --skip-ssl';
// The dump options Holdfast's MySQL source passes (adapters/source-mysql/src/internal/dump.ts), so both sides dump the same.
const MARIADB_DUMP_FLAGS = '--single-transaction --quick --routines --events --triggers --hex-blob --default-character-set=utf8mb4';
const mariadb = (sql) => run('mariadb', [...MARIADB.split(' '), '--batch', '--skip-column-names', '-e', sql]).then((result) => result.stdout.trim());
const unique = (prefix) => `${prefix}_${randomBytes(4).toString('hex')}`;

/** The decompressing command of a pipeline's output file, by codec. */
const decompress = (codec, file) => (codec === 'ZSTD' ? `zstd -dcq '${file}'` : `gzip -dc '${file}'`);

/** PostgreSQL on 127.0.0.1:5432: a generated database of `bytes`. */
export function postgresSource(bytes) {
  const database = unique('hf_bench_table');
  return {
    label: `database ${database}`,
    prepare: () => generatePostgres(database, bytes),
    cleanup: () => psql('postgres', `DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`),
    backupSpec: { kind: 'postgres', target: database },
    /** `compressor`: the pipe stage, e.g. `zstd -3 -T0 -q -c`. */
    pipeline: (compressor, file) => `pg_dump -Fc -Z0 ${PG} ${database} | ${compressor} > '${file}'`,
    pipelineText: (compressor) => `pg_dump -Fc -Z0 <db> | ${compressor.replace(' -q -c', '')} > f`,
    restoreTarget: () => {
      const target = unique('hf_bench_table_restore');
      return { spec: { kind: 'postgres', database: target }, cleanup: () => psql('postgres', `DROP DATABASE IF EXISTS "${target}" WITH (FORCE)`), target };
    },
    restorePipeline: (codec, file, target) => `createdb ${PG} ${target} && ${decompress(codec, file)} | pg_restore ${PG} --no-owner --no-privileges -d ${target}`,
    restorePipelineText: (codec) => `createdb <new> && ${codec === 'ZSTD' ? 'zstd -dc' : 'gzip -dc'} f | pg_restore --no-owner --no-privileges -d <new>`,
  };
}

/**
 * MariaDB on 127.0.0.1:3306 (root, no password): a generated database filled until its data and indexes reach
 * `bytes` (text rows plus 64 random bytes each, like the PostgreSQL one).
 */
export function mariadbSource(bytes) {
  const database = unique('hf_bench_table');
  return {
    label: `database ${database}`,
    prepare: async () => {
      await mariadb(`CREATE DATABASE ${database}`);
      await mariadb(`CREATE TABLE ${database}.bench_rows (id INT PRIMARY KEY, name VARCHAR(100), body TEXT, blobby VARBINARY(100)) ENGINE=InnoDB`);
      const batch = 50_000; // about 15 MiB of table
      for (let offset = 0; ; offset += batch) {
        await mariadb(`ANALYZE TABLE ${database}.bench_rows`);
        const size = Number(await mariadb(`SELECT COALESCE(SUM(data_length + index_length), 0) FROM information_schema.tables WHERE table_schema = '${database}'`));
        if (size >= bytes) return size;
        await mariadb(
          `INSERT INTO ${database}.bench_rows SELECT seq, CONCAT('customer ', seq % 9973), CONCAT(SHA2(seq, 256), ' ', REPEAT(MD5(seq), 4)), RANDOM_BYTES(64) FROM ${database}.seq_${offset + 1}_to_${offset + batch}`,
        );
      }
    },
    cleanup: () => mariadb(`DROP DATABASE IF EXISTS ${database}`),
    backupSpec: { kind: 'mysql', target: database },
    pipeline: (compressor, file) => `mariadb-dump ${MARIADB} ${MARIADB_DUMP_FLAGS} ${database} | ${compressor} > '${file}'`,
    pipelineText: (compressor) => `mariadb-dump ${MARIADB_DUMP_FLAGS} <db> | ${compressor.replace(' -q -c', '')} > f`,
    restoreTarget: () => {
      const target = unique('hf_bench_table_restore');
      return { spec: { kind: 'mysql', database: target }, cleanup: () => mariadb(`DROP DATABASE IF EXISTS ${target}`), target };
    },
    restorePipeline: (codec, file, target) => `mariadb ${MARIADB} -e 'CREATE DATABASE ${target}' && ${decompress(codec, file)} | mariadb ${MARIADB} --binary-mode ${target}`,
    restorePipelineText: (codec) => `mariadb -e 'CREATE DATABASE <new>' && ${codec === 'ZSTD' ? 'zstd -dc' : 'gzip -dc'} f | mariadb --binary-mode <new>`,
  };
}

/**
 * A folder: `generate(dir)` fills a scratch folder (removed afterwards), or `inPlace` names an existing folder that
 * is only read (the repository's node_modules: nothing under it is written or removed).
 */
export function folderSource(work, name, { generate, inPlace }) {
  const source = inPlace ?? join(work, `${name}-source`);
  return {
    label: inPlace ? `${inPlace} (read in place)` : source,
    prepare: async () => {
      if (inPlace) return bytesUnder(inPlace);
      await generate(source);
      return bytesUnder(source);
    },
    cleanup: () => (inPlace ? undefined : rm(source, { recursive: true, force: true })),
    backupSpec: { kind: 'directory', target: source },
    pipeline: (compressor, file) => `tar -cf - -C '${source}' . | ${compressor} > '${file}'`,
    pipelineText: (compressor) => `tar -cf - dir | ${compressor.replace(' -q -c', '')} > f`,
    restoreTarget: () => {
      const target = join(work, unique(`${name}-restore`));
      return { spec: { kind: 'directory', targetPath: target }, prepare: () => mkdir(target), cleanup: () => rm(target, { recursive: true, force: true }), target };
    },
    restorePipeline: (codec, file, target) => `mkdir '${target}' && ${decompress(codec, file)} | tar -x -C '${target}'`,
    restorePipelineText: (codec) => `${codec === 'ZSTD' ? 'zstd -dc' : 'gzip -dc'} f | tar -x -C <new dir>`,
  };
}

export { generateDirectory, generatePostgres, generateSmallFiles };
