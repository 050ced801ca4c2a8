// Recovery point of issue 43, acceptance 4 (PostgreSQL) and issue 44, acceptance 3 (MySQL/MariaDB): "with one
// transaction per second, the newest archived WAL / binary log data is never older than the flush interval plus 10 s
// (measured over 5 minutes)". Not part of `npm test`; build first; needs the PITR test servers
// (`npm run test:services`). Usage:
//   node tooling/bench/pitr-recovery-point.mjs [--engine=postgres|mariadb] [--flush=1] [--seconds=300]
// (or HOLDFAST_PITR_RP_ENGINE / HOLDFAST_PITR_RP_FLUSH_SECONDS / HOLDFAST_PITR_RP_SECONDS; the flush interval is the
// source's walFlushIntervalSeconds (postgres) or binlogFlushIntervalSeconds (mariadb), default 10 as in the product).
// mariadb: the PITR MariaDB (127.0.0.1:3307), the MySQL source in point-in-time mode as its administrator account, a
// database of the run's own (a logical base of it), one row a second into it; other writers on the server are fine.
// An in-process Holdfast (the bench stack, production supervisor timings except a 2 s pass so the new job starts
// streaming sooner) streams the server's WAL or binary log for a point-in-time job with one local destination (ZSTD)
// and takes one base backup; then a writer commits one row a second and, every second, the job's window is read from
// GET /api/jobs/:id/point-in-time (the same computation as the holdfast_pitr_recovery_point_seconds gauge):
//   age of the newest archived log = the moment the reply arrived - window.end (the instant the newest archived
//                                    piece covers; what the acceptance bounds);
//   unarchived span                = the moment the reply arrived - the oldest commit not yet covered by the window
//                                    (0 when every commit is covered): what a loss of the database server then would cost;
//   delay per commit               = when the first reply showed a window covering the commit - when COMMIT returned.
// Prints max / p95 / median of each and whether the bound (flush + 10 s) held. Cleans up the slot (postgres), table or
// database, and folders.
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { startHoldfast } from './lib/holdfast-stack.mjs';
import { PITR_SOCKET_DIR, dropSlotsOfJobs, pitrCluster, pitrPsql } from './lib/pitr-cluster.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const argument = (name) => process.argv.find((arg) => arg.startsWith(`--${name}=`))?.split('=')[1];
const flushSeconds = Number(argument('flush') ?? process.env.HOLDFAST_PITR_RP_FLUSH_SECONDS ?? 10);
const engine = argument('engine') ?? process.env.HOLDFAST_PITR_RP_ENGINE ?? 'postgres';
if (!['postgres', 'mariadb'].includes(engine)) throw new Error('--engine must be postgres or mariadb');
const logName = engine === 'postgres' ? 'WAL' : 'binary log';
const seconds = Number(argument('seconds') ?? process.env.HOLDFAST_PITR_RP_SECONDS ?? 300);
if (!(Number.isInteger(flushSeconds) && flushSeconds >= 1 && flushSeconds <= 3600)) throw new Error('--flush must be a whole number of seconds, 1 to 3600');
if (!(seconds > 0)) throw new Error('--seconds must be positive');
const boundSeconds = flushSeconds + 10;
const log = (message) => process.stderr.write(`[recovery-point ${engine} f=${flushSeconds}] ${new Date().toISOString().slice(11, 19)} ${message}\n`);
const loadAverage = async () => (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const table = `hf_recovery_point_${randomBytes(4).toString('hex')}`;
const work = await mkdtemp(join(tmpdir(), 'holdfast-recovery-point-'));
await Promise.all(['data', 'dest'].map((dir) => mkdir(join(work, dir))));
const report = { startedAt: new Date().toISOString(), engine, flushSeconds, seconds, boundSeconds, node: process.version, loadAtStart: await loadAverage() };
let holdfast;
let jobId;

/**
 * What differs between the engines: the source config, the job's databases, the writer (`commit(id)` answers when
 * COMMIT returned) and the clean-up. `table` is a table on PostgreSQL and the run's own database on MariaDB.
 */
async function postgresTarget() {
  const cluster = await pitrCluster();
  const writer = new pg.Client({ host: PITR_SOCKET_DIR, port: cluster.port, user: 'postgres', database: 'postgres' });
  return {
    source: { adapterId: 'postgres', config: { mode: 'physical', host: cluster.host, port: cluster.port, user: cluster.user, password: cluster.password, sslMode: 'disable', walFlushIntervalSeconds: flushSeconds } },
    databases: [],
    async prepare() {
      await writer.connect();
      await writer.query(`CREATE TABLE ${table} (id int PRIMARY KEY, committed_at timestamptz NOT NULL)`);
    },
    /** The WAL stream starts at the slot's position: a base can follow at once. */
    async beforeBase() {},
    async afterBase() {},
    async commit(id) {
      await writer.query(`INSERT INTO ${table} VALUES ($1, clock_timestamp())`, [id]);
      return Date.now();
    },
    async cleanUp() {
      await writer.query(`DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
      await writer.end().catch(() => undefined);
      if (jobId) {
        const left = await dropSlotsOfJobs([jobId]);
        if (left.length > 0) log(`slot NOT dropped (drop it by hand): ${left.join(', ')}`);
        report.slotsLeft = left;
      }
      await pitrPsql('postgres', `DROP TABLE IF EXISTS ${table}`).catch(() => undefined);
    },
  };
}

async function mariadbTarget() {
  const server = JSON.parse(await readFile('/tmp/holdfast-test-services/mariadb-pitr/mariadb-pitr.json', 'utf8'));
  const { user, password } = server.users.admin;
  const writer = await mysql.createConnection({ host: server.host, port: server.port, user, password });
  return {
    source: { adapterId: 'mysql', config: { mode: 'point-in-time', host: server.host, port: server.port, user, password, tls: 'disable', binlogFlushIntervalSeconds: flushSeconds } },
    databases: [table],
    async prepare() {
      await writer.query(`CREATE DATABASE \`${table}\``);
      await writer.query(`CREATE TABLE \`${table}\`.commits (id INT PRIMARY KEY, committed_at DATETIME(6) NOT NULL) ENGINE=InnoDB`);
    },
    /**
     * The binary log stream starts with the server's current file, which must hold the base's coordinates: the base
     * waits for a first archived piece (a write of the run's own makes sure the file grows).
     */
    async beforeBase(pointInTime) {
      await writer.query(`INSERT INTO \`${table}\`.commits VALUES (0, NOW(6))`);
      await until('a first archived piece', async () => (await pointInTime()).segments > 0, 120_000);
    },
    /** A window needs a piece after the base; a partial is only taken when the file grew (a quiet server). */
    async afterBase() {
      await writer.query(`INSERT INTO \`${table}\`.commits VALUES (-1, NOW(6))`);
    },
    async commit(id) {
      await writer.query(`INSERT INTO \`${table}\`.commits VALUES (?, NOW(6))`, [id]);
      return Date.now();
    },
    async cleanUp() {
      await writer.query(`DROP DATABASE IF EXISTS \`${table}\``).catch(() => undefined);
      await writer.end().catch(() => undefined);
    },
  };
}

async function until(what, check, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(200);
  }
}

const target = engine === 'postgres' ? await postgresTarget() : await mariadbTarget();
try {
  await target.prepare();
  holdfast = await startHoldfast({ dataDir: join(work, 'data'), pointInTime: { reloadIntervalMs: 2_000 }, extraAdapters: engine === 'mariadb' ? ['@holdfast/source-mysql'] : [] });
  const data = (answer) => answer?.data ?? answer;
  const pointInTime = async () => data(await holdfast.call('GET', `/api/jobs/${jobId}/point-in-time`));
  const source = data(
    await holdfast.call('POST', '/api/adapters', { name: 'recovery point source', type: 'database', ...target.source }),
  );
  const storage = data(await holdfast.call('POST', '/api/adapters', { name: 'recovery point local', type: 'storage', adapterId: 'local', config: { path: join(work, 'dest') } }));
  const job = data(
    await holdfast.call('POST', '/api/jobs', { name: 'recovery point', schedule: '0 0 1 1 *', enabled: true, sourceId: source.id, databases: target.databases, compression: 'ZSTD', skipVerification: true, destinations: [{ configId: storage.id, priority: 0 }] }),
  );
  jobId = job.id;
  await until(`the ${logName} stream`, async () => (await pointInTime()).streaming?.state === 'streaming', 120_000);
  await target.beforeBase(pointInTime);
  log('streaming; taking the base backup');
  const run = data(await holdfast.call('POST', `/api/jobs/${jobId}/run`));
  const base = await until('the base backup', async () => {
    const execution = data(await holdfast.call('GET', `/api/executions/${run.executionId}`));
    return ['Pending', 'Running'].includes(execution.status) ? undefined : execution;
  }, 300_000);
  if (base.status !== 'Success') throw new Error(`base backup ended ${base.status}`);
  await target.afterBase();
  await until('a window', async () => (await pointInTime()).window, 120_000);

  log(`writing one row a second for ${seconds} s, reading the window every second (bound ${boundSeconds} s)`);
  const commits = [];
  const samples = [];
  const writeUntil = Date.now() + seconds * 1000;
  const writing = (async () => {
    for (let id = 1; Date.now() < writeUntil; id++) {
      const tick = Date.now();
      commits.push({ id, clientAfter: await target.commit(id) });
      await sleep(Math.max(0, 1000 - (Date.now() - tick)));
    }
  })();
  // Sampling goes on for flush + 15 s after the last commit, so the last commits' delays are seen too.
  const sampleUntil = writeUntil + (flushSeconds + 15) * 1000;
  while (Date.now() < sampleUntil) {
    const tick = Date.now();
    const reply = await pointInTime();
    const at = Date.now();
    samples.push({ at, end: reply.window ? Date.parse(reply.window.end) : null, recoveryPointSeconds: reply.recoveryPointSeconds ?? null, state: reply.streaming?.state });
    await sleep(Math.max(0, 1000 - (Date.now() - tick)));
  }
  await writing;

  const during = samples.filter((sample) => sample.at <= writeUntil);
  const ages = during.map((sample) => (sample.end === null ? Infinity : (sample.at - sample.end) / 1000));
  const spans = during.map((sample) => {
    const pending = commits.filter((commit) => commit.clientAfter <= sample.at && (sample.end === null || commit.clientAfter > sample.end));
    return pending.length === 0 ? 0 : (sample.at - pending[0].clientAfter) / 1000;
  });
  const delays = [];
  let uncovered = 0;
  for (const commit of commits) {
    const covering = samples.find((sample) => sample.end !== null && sample.end >= commit.clientAfter);
    if (covering) delays.push((covering.at - commit.clientAfter) / 1000);
    else uncovered++;
  }
  const stats = (values) => {
    const sorted = [...values].sort((a, b) => a - b);
    const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    return { count: sorted.length, max: sorted[sorted.length - 1], p95: at(0.95), median: at(0.5), min: sorted[0] };
  };
  Object.assign(report, {
    commits: commits.length,
    samples: during.length,
    notStreamingSamples: during.filter((sample) => sample.state !== 'streaming').length,
    age: stats(ages),
    unarchivedSpan: stats(spans),
    commitDelay: stats(delays),
    uncoveredCommits: uncovered,
    apiRecoveryPointMax: Math.max(...during.map((sample) => sample.recoveryPointSeconds ?? Infinity)),
    passed: Math.max(...ages) <= boundSeconds && uncovered === 0,
  });
  report.raw = { commits, samples };
} finally {
  report.loadAtEnd = await loadAverage();
  await holdfast?.close().catch((error) => log(`close: ${error.message}`));
  await target.cleanUp();
  await rm(work, { recursive: true, force: true });
}

const line = (name, s) => `${name.padEnd(34)} max ${s.max.toFixed(1)} s  p95 ${s.p95.toFixed(1)} s  median ${s.median.toFixed(1)} s  (n=${s.count})`;
console.log(`recovery point (${engine}): flush interval ${flushSeconds} s, one commit a second for ${seconds} s (${report.commits} commits, ${report.samples} samples), load average ${report.loadAtStart} at start, ${report.loadAtEnd} at end`);
console.log(line(`age of the newest archived ${logName}`, report.age));
console.log(line('unarchived span (data at risk)', report.unarchivedSpan));
console.log(line('commit -> covered by the window', report.commitDelay));
console.log(`API recoveryPointSeconds max ${report.apiRecoveryPointMax} s; samples not 'streaming': ${report.notStreamingSamples}; commits never covered: ${report.uncoveredCommits}`);
console.log(`bound flush + 10 s = ${boundSeconds} s: ${report.passed ? 'PASS' : 'FAIL'} (max age ${report.age.max.toFixed(1)} s)`);
const resultsDir = join(here, 'results');
await mkdir(resultsDir, { recursive: true });
const file = join(resultsDir, `recovery-point-${engine === 'postgres' ? '' : `${engine}-`}f${flushSeconds}-${report.startedAt.replace(/[:.]/g, '-')}.json`);
await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
console.log(`JSON: ${file}`);
process.exitCode = report.passed ? 0 : 1;
