// MySQL/MariaDB PITR benchmark of issue 44, acceptance 6, logical part (not part of `npm test`; build first). Against
// the PITR MariaDB (127.0.0.1:3307, `npm run test:services`), with a bench database created for the run and dropped
// afterwards; every repeat (the bases in an alternating order, Holdfast's replay first, see below):
//   base rows:   Holdfast's point-in-time base backup of the bench database (the MySQL source's logical dump, ZSTD,
//                one local destination) against `mariadb-backup --backup --stream=xbstream > file` (the whole server:
//                Holdfast's physical bases are not built) and `mariadb-dump --single-transaction --master-data=2 |
//                zstd > file`;
//   replay rows: after the bases, updates that write about HOLDFAST_BENCH_MYSQL_REPLAY_MB of binary log; then
//                Holdfast's restore to the second after the updates into a new database (its base plus the archived log) against the
//                same by hand: the repeat's dump loaded into a new database (`zstd -dc | mariadb`) and
//                `mariadb-binlog --start-position=<the dump's coordinates> --database --rewrite-db files | mariadb`
//                (as Holdfast replays: --skip-gtid-strict-mode, and the statements that would log the replayed
//                transactions under their old GTIDs left out: the server already logged those numbers, and a log
//                with them out of order stops a later strict mariadb-binlog with "Found out of order GTID").
//                Both restored databases must give the bench table's CHECKSUM TABLE.
// Figures are medians with the spread (min-max).
//   HOLDFAST_BENCH_SIZE_MB            size of the bench table's data (default 256)
//   HOLDFAST_BENCH_REPEATS            repeats (default 3)
//   HOLDFAST_BENCH_MYSQL_REPLAY_MB    binary log written between base and restore (default 64)
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { startHoldfast } from './lib/holdfast-stack.mjs';
import { run } from './lib/measure.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const sizeMiB = Number(process.env.HOLDFAST_BENCH_SIZE_MB ?? 256);
const repeats = Number(process.env.HOLDFAST_BENCH_REPEATS ?? 3);
const replayMiB = Number(process.env.HOLDFAST_BENCH_MYSQL_REPLAY_MB ?? 64);
const log = (message) => process.stderr.write(`[bench:mysql-pitr] ${new Date().toISOString().slice(11, 19)} ${message}\n`);
const loadAverage = async () => (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const mib = (bytes) => bytes / 1024 / 1024;

const server = JSON.parse(await readFile('/tmp/holdfast-test-services/mariadb-pitr/mariadb-pitr.json', 'utf8'));
const { user, password } = server.users.admin;
const DB = `hf_bench_pitr_${randomBytes(4).toString('hex')}`;
const cli = `-h${server.host} -P${server.port} -u${user} -p${password}`;
const admin = await mysql.createConnection({ host: server.host, port: server.port, user, password, multipleStatements: true });
const sql = async (text, values = []) => (await admin.query(text, values))[0];
const work = await mkdtemp(join(tmpdir(), 'hf-bench-mysql-pitr-'));
const report = { startedAt: new Date().toISOString(), sizeMiB, repeats, replayMiB, server: server.version, loadAtStart: await loadAverage(), rows: {} };
let holdfast;

/** Wall seconds of `work()`. */
async function timed(work) {
  const started = process.hrtime.bigint();
  const value = await work();
  return { seconds: Number(process.hrtime.bigint() - started) / 1e9, value };
}
const shell = (script) => run('bash', ['-c', `set -eo pipefail; ${script}`]);

async function until(what, check, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(200);
  }
}

/** Bytes of files under `path` outside folders named `wal` (where the archiver keeps binary log pieces): the bases. */
async function baseBytesUnder(path) {
  let total = 0;
  for (const entry of await readdir(path, { withFileTypes: true })) {
    if (entry.isDirectory() && entry.name !== 'wal') total += await baseBytesUnder(join(path, entry.name));
    else if (entry.isFile()) total += (await stat(join(path, entry.name))).size;
  }
  return total;
}

/** Bytes of binary log the server holds (every file); growth of it measures what a replay reads. */
async function binlogBytes() {
  return (await sql('SHOW BINARY LOGS')).reduce((sum, row) => sum + Number(row.File_size), 0);
}

function record(row, seconds, extra = {}) {
  (report.rows[row] ??= []).push({ seconds, ...extra });
  log(`${row}: ${seconds.toFixed(1)} s ${JSON.stringify(extra)}`);
}

try {
  // The bench table, about sizeMiB of row data (about 300 bytes a row).
  const rows = Math.round((sizeMiB * 1024 * 1024) / 300);
  log(`loading ${DB}.bench_rows: ${rows} rows (~${sizeMiB} MiB)`);
  await sql(`CREATE DATABASE \`${DB}\``);
  await sql(`CREATE TABLE \`${DB}\`.bench_rows (id BIGINT PRIMARY KEY, created_at DATETIME NOT NULL, name VARCHAR(64) NOT NULL, payload VARCHAR(255) NOT NULL) ENGINE=InnoDB`);
  for (let start = 1; start <= rows; start += 200_000) {
    const end = Math.min(rows, start + 199_999);
    await sql(
      `INSERT INTO \`${DB}\`.bench_rows SELECT seq, NOW() - INTERVAL seq SECOND, CONCAT('customer ', seq % 9973), CONCAT(MD5(seq), REPEAT(MD5(seq * 7), 6), FLOOR(RAND() * 1e9)) FROM \`${DB}\`.seq_${start}_to_${end}`,
    );
  }
  // A new binary log file, so the stream's partial snapshots copy the bench's writes and not the load's.
  await sql('FLUSH BINARY LOGS');
  await sql(`ANALYZE TABLE \`${DB}\`.bench_rows`);
  report.tableBytes = Number((await sql(`SELECT data_length + index_length AS bytes FROM information_schema.tables WHERE table_schema = ? AND table_name = 'bench_rows'`, [DB]))[0].bytes);

  const dest = join(work, 'dest');
  await mkdir(join(work, 'data'));
  await mkdir(dest);
  holdfast = await startHoldfast({ dataDir: join(work, 'data'), pointInTime: { reloadIntervalMs: 2_000 }, extraAdapters: ['@holdfast/source-mysql'] });
  const data = (answer) => answer?.data ?? answer;
  const source = data(await holdfast.call('POST', '/api/adapters', { name: 'bench mariadb', type: 'database', adapterId: 'mysql', config: { mode: 'point-in-time', host: server.host, port: server.port, user, password, tls: 'disable' } }));
  const storage = data(await holdfast.call('POST', '/api/adapters', { name: 'bench local', type: 'storage', adapterId: 'local', config: { path: dest } }));
  const job = data(await holdfast.call('POST', '/api/jobs', { name: 'bench mysql pitr', schedule: '0 0 1 1 *', enabled: true, sourceId: source.id, databases: [DB], compression: 'ZSTD', skipVerification: true, destinations: [{ configId: storage.id, priority: 0 }] }));
  const pointInTime = async () => data(await holdfast.call('GET', `/api/jobs/${job.id}/point-in-time`));
  const finished = (executionId) =>
    until(`execution ${executionId}`, async () => {
      const execution = data(await holdfast.call('GET', `/api/executions/${executionId}`));
      return ['Pending', 'Running'].includes(execution.status) ? undefined : execution;
    }, 1_800_000);
  await until('the binary log stream', async () => (await pointInTime()).streaming?.state === 'streaming', 120_000);
  await sql(`UPDATE \`${DB}\`.bench_rows SET name = 'first archived piece' WHERE id = 1`);
  await until('a first archived piece', async () => (await pointInTime()).segments > 0, 120_000);

  const checksum = async (database) => String((await sql(`CHECKSUM TABLE \`${database}\`.bench_rows`))[0].Checksum);
  const bases = {
    holdfast: async () => {
      const before = await baseBytesUnder(dest);
      const { executionId } = data(await holdfast.call('POST', `/api/jobs/${job.id}/run`));
      const execution = await finished(executionId);
      if (execution.status !== 'Success') throw new Error(`Holdfast base backup ended ${execution.status}`);
      return { bytes: (await baseBytesUnder(dest)) - before };
    },
    'mariadb-backup': async () => {
      const target = join(work, 'mariabackup-tmp');
      await rm(target, { recursive: true, force: true });
      await shell(`mariadb-backup --backup --stream=xbstream --socket=${server.socket} -u${user} -p${password} --datadir=${server.dataDir} --target-dir=${target} > ${join(work, 'backup.xbstream')} 2>${join(work, 'backup.log')} || { tail -5 ${join(work, 'backup.log')} >&2; exit 1; }`);
      return { bytes: (await stat(join(work, 'backup.xbstream'))).size };
    },
    'mariadb-dump | zstd': async () => {
      await shell(`mariadb-dump ${cli} --single-transaction --master-data=2 --quick --hex-blob ${DB} | zstd -q -3 > ${join(work, 'dump.sql.zst')}`);
      return { bytes: (await stat(join(work, 'dump.sql.zst'))).size };
    },
  };

  for (let repeat = 0; repeat < repeats; repeat++) {
    const names = Object.keys(bases);
    for (const name of [...names.slice(repeat % names.length), ...names.slice(0, repeat % names.length)]) {
      const { seconds, value } = await timed(bases[name]);
      record(`base: ${name}`, seconds, { MiB: Number(mib(value.bytes).toFixed(1)) });
    }

    // Changes after both logical bases: updates of whole rows until the server's binary log grew by replayMiB.
    const logBefore = await binlogBytes();
    for (let id = 1, round = 0; (await binlogBytes()) - logBefore < replayMiB * 1024 * 1024; id += 20_000) {
      if (id > rows) [id, round] = [1, round + 1];
      await sql(`UPDATE \`${DB}\`.bench_rows SET payload = CONCAT(MD5(id + ?), REPEAT(MD5(id * ?), 6)) WHERE id BETWEEN ? AND ?`, [repeat * 1000 + round, repeat + round + 3, id, id + 19_999]);
    }
    const logged = (await binlogBytes()) - logBefore;
    // Both replays stop at the end of the updates, not at the newest data: whichever restore runs second would
    // otherwise also read the binary log the first one wrote (its load and replay, a few hundred MiB). Holdfast gets
    // the second after the last update's (a time target replays what committed before its second), by hand the
    // server's position just after the updates.
    const [{ File: stopFile, Position: stopPosition }] = await sql('SHOW MASTER STATUS');
    const stopAt = new Date((Math.floor(Date.now() / 1000) + 1) * 1000);
    await sleep(Math.max(0, stopAt.getTime() - Date.now()));
    await until('the window to cover the updates', async () => {
      const window = (await pointInTime()).window;
      return window && Date.parse(window.end) >= stopAt.getTime();
    }, 600_000);
    const expected = await checksum(DB);

    const replays = {
      holdfast: async () => {
        const into = `${DB}_h${repeat}`;
        const { executionId } = data(await holdfast.call('POST', `/api/jobs/${job.id}/point-in-time/restore`, { target: { type: 'time', time: stopAt.toISOString() }, database: DB, targetDatabase: into }));
        const execution = await finished(executionId);
        if (execution.status !== 'Success') {
          const logs = data(await holdfast.call('GET', `/api/executions/${executionId}?includeLogs=true`)).logs;
          throw new Error(`Holdfast restore ended ${execution.status}: ${JSON.stringify(logs).slice(-3000)}`);
        }
        return { into };
      },
      'dump + mariadb-binlog by hand': async () => {
        const into = `${DB}_m${repeat}`;
        const dump = join(work, 'dump.sql.zst');
        const header = (await shell(`set +o pipefail; zstd -dc ${dump} 2>/dev/null | head -c 100000 | grep -m1 'CHANGE MASTER TO'`)).stdout;
        const [, file, position] = header.match(/MASTER_LOG_FILE='([^']+)', MASTER_LOG_POS=(\d+)/) ?? [];
        if (!file) throw new Error(`no coordinates in the dump: ${header}`);
        const load = await timed(() => shell(`mariadb ${cli} -e 'CREATE DATABASE \`${into}\`' && zstd -dc ${dump} | mariadb ${cli} ${into}`));
        const files = (await sql('SHOW BINARY LOGS')).map((row) => row.Log_name).filter((name) => name >= file && name <= stopFile);
        // The server is shared: another test's PURGE BINARY LOGS can take the dump's file away. Then the replay by
        // hand cannot be done from the server's files (Holdfast's archive still has them); the repeat says so.
        if (files[0] !== file) return { into, logPurged: true };
        const replay = await timed(() =>
          shell(
            `mariadb-binlog --skip-gtid-strict-mode --start-position=${position} --stop-position=${stopPosition} --database=${DB} --rewrite-db='${DB}->${into}' ${files.map((name) => join(server.dataDir, name)).join(' ')} | grep -vE '^/\\*M?![0-9]+ SET @@session\\.(gtid_seq_no|gtid_domain_id|server_id)=[0-9]+\\*/' | mariadb ${cli}`,
          ),
        );
        return { into, loadSeconds: Number(load.seconds.toFixed(1)), replaySeconds: Number(replay.seconds.toFixed(1)) };
      },
    };
    // Holdfast's restore goes first in every repeat: run second, the archived file holds the by-hand restore's few
    // hundred MiB after the target, mariadb-binlog stops at the target before reading it all, and the restore fails
    // with "reading mysql-bin.N from the archive failed: write EPIPE" (seen twice on 2026-12-06; a bug of the
    // source's replay, reported).
    for (const name of ['holdfast', 'dump + mariadb-binlog by hand']) {
      const { seconds, value } = await timed(replays[name]);
      const got = await checksum(value.into).catch(() => 'none');
      record(`replay: ${name}`, seconds, { ...value, logMiB: Number(mib(logged).toFixed(1)), checksumMatches: got === expected });
      await sql(`DROP DATABASE IF EXISTS \`${value.into}\``);
    }
  }
} finally {
  report.loadAtEnd = await loadAverage();
  await holdfast?.close().catch((error) => log(`close: ${error.message}`));
  const [left] = await admin.query('SHOW DATABASES').catch(() => [[]]);
  for (const name of left.map((row) => String(Object.values(row)[0])).filter((name) => name.startsWith(DB))) await sql(`DROP DATABASE IF EXISTS \`${name}\``).catch(() => undefined);
  await admin.end().catch(() => undefined);
  await rm(work, { recursive: true, force: true });
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
console.log(`MariaDB ${report.server}, bench table ${mib(report.tableBytes ?? 0).toFixed(0)} MiB (data + index), ${repeats} repeats, load average ${report.loadAtStart} at start, ${report.loadAtEnd} at end`);
for (let [row, runs] of Object.entries(report.rows)) {
  const purged = runs.filter((entry) => entry.logPurged).length;
  runs = runs.filter((entry) => !entry.logPurged);
  if (runs.length === 0) {
    console.log(`${row.padEnd(48)} no repeat: another test purged the dump's binary log file every time`);
    continue;
  }
  const seconds = runs.map((entry) => entry.seconds);
  const extras = runs[0].MiB !== undefined ? `  size ${median(runs.map((entry) => entry.MiB)).toFixed(1)} MiB` : runs[0].loadSeconds !== undefined ? `  (load ${median(runs.map((entry) => entry.loadSeconds)).toFixed(1)} s + replay ${median(runs.map((entry) => entry.replaySeconds)).toFixed(1)} s)` : '';
  const logged = runs[0].logMiB !== undefined ? `  binary log ${median(runs.map((entry) => entry.logMiB)).toFixed(0)} MiB` : '';
  const checks = runs[0].checksumMatches !== undefined ? `  checksum ${runs.every((entry) => entry.checksumMatches) ? 'equal' : 'DIFFERENT'}` : '';
  console.log(`${row.padEnd(48)} median ${median(seconds).toFixed(1)} s  (${Math.min(...seconds).toFixed(1)}-${Math.max(...seconds).toFixed(1)})${extras}${logged}${checks}${purged ? `  (${purged} repeat(s) left out: another test purged the dump's binary log file)` : ''}`);
}
const resultsDir = join(here, 'results');
await mkdir(resultsDir, { recursive: true });
const file = join(resultsDir, `mysql-pitr-${report.startedAt.replace(/[:.]/g, '-')}.json`);
await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
console.log(`JSON: ${file}`);
