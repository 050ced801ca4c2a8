// PITR benchmark of issue 43, acceptance 5 (`npm run bench:pitr`; not part of `npm test`; build first). Against the
// PITR test cluster (PostgreSQL 15, 127.0.0.1:5433, `npm run test:services`), with a bench database created there
// for the run and dropped afterwards (a physical base backup copies the WHOLE cluster, so the run refuses when other
// databases there are big, and reports the cluster's size):
//   backup rows:  Holdfast's PITR base backup (ZSTD, one local destination) against `pg_basebackup -Ft -z` (and
//                 `--compress=client-zstd`, the same codec) to a local folder, and Holdfast's logical backup of the
//                 bench database (ZSTD);
//   restore rows: Holdfast's restore to the latest archived WAL against the pg_basebackup output restored by hand
//                 (untar, restore_command from a local WAL folder, recovery.signal, pg_ctl start until promoted);
//   streaming:    the peak RSS of a Holdfast process streaming WAL while this process writes for N seconds.
// Every row runs HOLDFAST_BENCH_REPEATS times, alternating; figures are medians with the spread (min-max).
//   HOLDFAST_BENCH_SIZE_MB              size of the bench database (default 1024)
//   HOLDFAST_BENCH_REPEATS              runs per row (default 3)
//   HOLDFAST_BENCH_PITR_STREAM_SECONDS  length of the streaming measurement (default size/8 s, between 20 and 60)
//   HOLDFAST_BENCH_PITR_LOAD_MBS        table data written per second during it (default 2 MB/s)
//   HOLDFAST_BENCH_PITR_FLUSH_SECONDS   walFlushIntervalSeconds of the jobs (default 1: the most partials)
//   HOLDFAST_BENCH_PITR_MAX_OTHER_MB    refuse when the cluster's other databases hold more (default 256)
import { spawn } from 'node:child_process';
import { randomBytes, randomInt } from 'node:crypto';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { SERVER_ENV, SERVER_NODE_FLAGS } from './lib/server-node-flags.mjs';
import { bytesUnder, run } from './lib/measure.mjs';
import { PG15_BIN, PITR_SOCKET_DIR, clusterDatabases, dropSlotsOfJobs, generatePitrDatabase, pitrCluster, pitrPsql, replicationSlots } from './lib/pitr-cluster.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const env = process.env;
const sizeMiB = Number(env.HOLDFAST_BENCH_SIZE_MB ?? 1024);
const repeats = Number(env.HOLDFAST_BENCH_REPEATS ?? 3);
const streamSeconds = Number(env.HOLDFAST_BENCH_PITR_STREAM_SECONDS ?? Math.min(60, Math.max(20, Math.round(sizeMiB / 8))));
const loadMBs = Number(env.HOLDFAST_BENCH_PITR_LOAD_MBS ?? 2);
const flushSeconds = Number(env.HOLDFAST_BENCH_PITR_FLUSH_SECONDS ?? 1);
const maxOtherMiB = Number(env.HOLDFAST_BENCH_PITR_MAX_OTHER_MB ?? 256);
for (const [name, value] of Object.entries({ HOLDFAST_BENCH_SIZE_MB: sizeMiB, HOLDFAST_BENCH_REPEATS: repeats, HOLDFAST_BENCH_PITR_STREAM_SECONDS: streamSeconds, HOLDFAST_BENCH_PITR_LOAD_MBS: loadMBs, HOLDFAST_BENCH_PITR_FLUSH_SECONDS: flushSeconds, HOLDFAST_BENCH_PITR_MAX_OTHER_MB: maxOtherMiB })) {
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
}
const log = (message) => process.stderr.write(`[bench:pitr] ${new Date().toISOString().slice(11, 19)} ${message}\n`);
const mib = (bytes) => bytes / 1024 / 1024;
const loadAverage = async () => (await readFile('/proc/loadavg', 'utf8')).split(' ').slice(0, 3).join(' ');
const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
/** CPU seconds of the children this process waited for (the shell baselines and everything they ran). */
async function childrenCpu() {
  const fields = (await readFile('/proc/self/stat', 'utf8')).split(') ')[1].split(' ');
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

const cluster = await pitrCluster();
const systemKey = randomBytes(32).toString('hex');
const jobIds = new Set();
const startedServers = new Set();

/**
 * Runs pitr-holdfast-run.mjs with `spec` (server node flags and environment); samples its RSS every 250 ms; calls
 * `onLine` with each JSON line it prints and answers the last one (throws unless it succeeded). `stdin`: a pipe the
 * caller writes to (the streaming row's "stop").
 */
function holdfastChild(spec, { onLine, onSpawn } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, join(here, 'pitr-holdfast-run.mjs'), JSON.stringify({ systemKey, cluster, flushSeconds, ...spec })], {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, ...SERVER_ENV },
    });
    onSpawn?.(child);
    let buffered = '';
    let last = null;
    let parentSampledKiB = 0;
    const timer = setInterval(async () => {
      const status = await readFile(`/proc/${child.pid}/status`, 'utf8').catch(() => '');
      parentSampledKiB = Math.max(parentSampledKiB, Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0));
    }, 250);
    child.stdout.on('data', (chunk) => {
      buffered += chunk;
      for (let newline = buffered.indexOf('\n'); newline >= 0; newline = buffered.indexOf('\n')) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (!line.startsWith('{')) continue;
        last = JSON.parse(line);
        if (last.jobId) jobIds.add(last.jobId);
        onLine?.(last, child);
      }
    });
    child.on('error', reject);
    child.on('close', (code) => {
      clearInterval(timer);
      if (code !== 0 || !last) return reject(new Error(`pitr-holdfast-run.mjs (${spec.mode}) exited ${code}`));
      if (last.status !== 'Success') return reject(new Error(`${spec.mode} ended ${last.status}: ${(last.errors ?? []).join('; ')} ${(last.logTail ?? []).join(' | ')}`));
      resolve({ ...last, parentSampledPeakRssKiB: parentSampledKiB });
    });
  });
}

const figures = (result) => ({ seconds: result.seconds, cpuSeconds: result.cpuSeconds, childCpuSeconds: result.childCpuSeconds, bytes: result.size, peakRssKiB: result.peakRssKiB, sampledPeakRssKiB: Math.max(result.sampledPeakRssKiB ?? 0, result.parentSampledPeakRssKiB ?? 0), memoryPeak: result.memoryPeak });

/** A shell script as a row: wall seconds and the CPU of everything it ran. */
async function shellRow(script) {
  const cpuBefore = await childrenCpu();
  const started = process.hrtime.bigint();
  await run('sh', ['-c', `set -e; ${script}`]);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  return { seconds, childCpuSeconds: (await childrenCpu()) - cpuBefore };
}

/** A folder the restored server's user (`postgres`) owns; the benchmark runs as root. */
async function postgresDir(path, mode = 0o700) {
  await mkdir(path, { recursive: true });
  const { stdout } = await run('id', ['-u', 'postgres']);
  const { stdout: gid } = await run('id', ['-g', 'postgres']);
  await chown(path, Number(stdout), Number(gid));
  await chmod(path, mode);
}

const work = await mkdtemp(join(tmpdir(), 'holdfast-pitr-bench-'));
// The restored servers run as `postgres`: they must be able to enter the folders above their data directories.
await chmod(work, 0o755);
const report = { startedAt: new Date().toISOString(), sizeMiB, repeats, streamSeconds, loadMBs, flushSeconds, node: process.version, loadAtStart: await loadAverage(), rows: [] };
const database = `hf_pitr_bench_${randomBytes(4).toString('hex')}`;
let writer;
try {
  // A base backup copies every database of the cluster: other big databases would make the rows measure them too.
  const before = await clusterDatabases();
  const otherBytes = before.reduce((sum, db) => sum + db.bytes, 0);
  report.clusterBefore = before;
  report.slotsBefore = await replicationSlots();
  log(`cluster ${cluster.host}:${cluster.port} (${cluster.version}): ${before.length} databases, ${mib(otherBytes).toFixed(0)} MiB; slots: ${report.slotsBefore.map((slot) => `${slot.name}${slot.active ? ' (active)' : ''}`).join(', ') || 'none'}`);
  if (mib(otherBytes) > maxOtherMiB) {
    throw new Error(`the PITR cluster already holds ${mib(otherBytes).toFixed(0)} MiB in ${before.map((db) => `${db.name} ${mib(db.bytes).toFixed(0)} MiB`).join(', ')}: a base backup would measure that too. Drop them or raise HOLDFAST_BENCH_PITR_MAX_OTHER_MB`);
  }
  log(`generating ${sizeMiB} MiB database ${database} on the PITR cluster`);
  const generated = process.hrtime.bigint();
  report.databaseBytes = await generatePitrDatabase(database, sizeMiB * 1024 * 1024, cluster.user);
  report.generateSeconds = Number(process.hrtime.bigint() - generated) / 1e9;
  report.clusterBytes = (await clusterDatabases()).reduce((sum, db) => sum + db.bytes, 0);
  log(`database ${mib(report.databaseBytes).toFixed(0)} MiB in ${report.generateSeconds.toFixed(0)} s; cluster ${mib(report.clusterBytes).toFixed(0)} MiB`);

  // The job whose archive the restore rows read: streams, one base backup, WAL archived past it, then disabled.
  const setupDir = join(work, 'holdfast-setup');
  await mkdir(join(setupDir, 'data'), { recursive: true });
  await mkdir(join(setupDir, 'dest'), { recursive: true });
  await chmod(setupDir, 0o755);
  log('restore setup: a streaming job, one base backup, WAL archived past it');
  const setup = await holdfastChild({ mode: 'setup', dataDir: join(setupDir, 'data'), destination: join(setupDir, 'dest') });
  report.setup = { jobId: setup.jobId, base: figures(setup.base), window: setup.window };

  const pgEnv = `PGPASSWORD='${cluster.password}'`;
  const pgConn = `-h ${cluster.host} -p ${cluster.port} -U ${cluster.user}`;
  let keptBaseline = null;
  const rows = [
    {
      name: 'PITR base backup, Holdfast (ZSTD, local dest)',
      command: 'physical job, compression ZSTD, one local destination, POST /api/jobs/:id/run (pg_basebackup -Ft -X none --checkpoint=fast inside)',
      run: async () => {
        const runDir = join(work, `hf-base-${randomBytes(4).toString('hex')}`);
        await Promise.all(['data', 'dest'].map((dir) => mkdir(join(runDir, dir), { recursive: true })));
        try {
          return figures(await holdfastChild({ mode: 'backup', dataDir: join(runDir, 'data'), destination: join(runDir, 'dest') }));
        } finally {
          await rm(runDir, { recursive: true, force: true });
        }
      },
    },
    {
      name: 'pg_basebackup -Ft -z -D <dir>',
      command: `${pgEnv.replace(cluster.password, '…')} pg_basebackup ${pgConn} -Ft -z --checkpoint=fast -D <dir>`,
      run: async (round) => {
        const dir = join(work, `pgbb-gz-${randomBytes(4).toString('hex')}`);
        const result = await shellRow(`${pgEnv} pg_basebackup ${pgConn} -Ft -z --checkpoint=fast -D '${dir}'`);
        const bytes = await bytesUnder(dir);
        if (round === 0) {
          // The manual recovery untars it as `postgres`; pg_basebackup made the folder root's alone.
          await run('chmod', ['-R', 'a+rX', dir]);
          keptBaseline = dir;
        } else await rm(dir, { recursive: true, force: true });
        return { ...result, bytes };
      },
    },
    {
      name: 'pg_basebackup -Ft --compress=client-zstd -D <dir>',
      command: `${pgEnv.replace(cluster.password, '…')} pg_basebackup ${pgConn} -Ft --compress=client-zstd --checkpoint=fast -D <dir>`,
      run: async () => {
        const dir = join(work, `pgbb-zstd-${randomBytes(4).toString('hex')}`);
        try {
          const result = await shellRow(`${pgEnv} pg_basebackup ${pgConn} -Ft --compress=client-zstd --checkpoint=fast -D '${dir}'`);
          return { ...result, bytes: await bytesUnder(dir) };
        } finally {
          await rm(dir, { recursive: true, force: true });
        }
      },
    },
    {
      name: 'Holdfast logical backup of the same database (ZSTD, local dest)',
      command: `logical job of ${database}, compression ZSTD (pg_dump -Fc -Z0 inside), one local destination`,
      run: async () => {
        const runDir = join(work, `hf-logical-${randomBytes(4).toString('hex')}`);
        await Promise.all(['data', 'dest'].map((dir) => mkdir(join(runDir, dir), { recursive: true })));
        try {
          return figures(await holdfastChild({ mode: 'backup', database, dataDir: join(runDir, 'data'), destination: join(runDir, 'dest') }));
        } finally {
          await rm(runDir, { recursive: true, force: true });
        }
      },
    },
    {
      name: 'restore to latest: Holdfast',
      command: 'POST /api/jobs/:id/point-in-time/restore { target: latest, targetPath } (base and WAL from the local destination, server stopped at the end)',
      run: async () => {
        const targetPath = join(setupDir, `restore-${randomBytes(4).toString('hex')}`);
        startedServers.add(targetPath);
        try {
          return figures(await holdfastChild({ mode: 'restore', dataDir: join(setupDir, 'data'), jobId: setup.jobId, targetPath }));
        } finally {
          await stopServer(targetPath);
          await rm(targetPath, { recursive: true, force: true });
          await rm(join(setupDir, `.${targetPath.split('/').pop()}.wal`), { recursive: true, force: true });
        }
      },
    },
    {
      name: 'restore to latest: pg_basebackup output + manual recovery',
      command: 'tar -xzf base.tar.gz; tar -xzf pg_wal.tar.gz into a WAL folder; restore_command cp; recovery.signal; pg_ctl start -w (hot_standby=off: returns once promoted); pg_is_in_recovery() = f; pg_ctl stop -m fast',
      run: async () => {
        if (!keptBaseline) throw new Error('the pg_basebackup output of round 1 was not kept');
        const root = join(work, `manual-${randomBytes(4).toString('hex')}`);
        const [target, wal, socket] = ['data', 'wal', 'socket'].map((name) => join(root, name));
        await postgresDir(root, 0o755);
        for (const dir of [target, wal, socket]) await postgresDir(dir);
        startedServers.add(target);
        const port = 40_000 + randomInt(20_000);
        const options = `-c port=${port} -c listen_addresses='' -c unix_socket_directories='${socket}' -c hot_standby=off -c logging_collector=off`;
        const asPostgres = [
          `tar -xzf '${keptBaseline}/base.tar.gz' -C '${target}'`,
          `tar -xzf '${keptBaseline}/pg_wal.tar.gz' -C '${wal}'`,
          `printf "%s\\n" "restore_command = 'cp ${wal}/%f %p'" >> '${target}/postgresql.auto.conf'`,
          `touch '${target}/recovery.signal'`,
          `${PG15_BIN}/pg_ctl -D '${target}' -l '${root}/server.log' -w -t 3600 -o "${options}" start > /dev/null`,
          `test "$(psql -h '${socket}' -p ${port} -U postgres -d postgres -XAtqc 'SELECT pg_is_in_recovery()')" = f`,
          `${PG15_BIN}/pg_ctl -D '${target}' -w -m fast stop > /dev/null`,
        ].join(' && ');
        try {
          return await shellRow(`runuser -u postgres -- sh -c ${shellQuote(`set -e; ${asPostgres}`)}`);
        } finally {
          await stopServer(target);
          await rm(root, { recursive: true, force: true });
        }
      },
    },
  ];

  const results = new Map(rows.map((row) => [row.name, []]));
  for (let round = 0; round < repeats; round++) {
    for (const row of rows) {
      const load = await loadAverage();
      log(`round ${round + 1}/${repeats}: ${row.name} (load ${load})`);
      const result = await row.run(round);
      results.get(row.name).push({ ...result, load });
      const cpu = [result.cpuSeconds === undefined ? null : `Holdfast CPU ${result.cpuSeconds.toFixed(1)} s`, `tools' CPU ${result.childCpuSeconds.toFixed(1)} s`].filter(Boolean).join(', ');
      log(`  ${result.seconds.toFixed(2)} s (${cpu})${result.bytes ? `, ${mib(result.bytes).toFixed(1)} MiB out` : ''}${result.peakRssKiB ? `, peak RSS ${(result.peakRssKiB / 1024).toFixed(0)} MiB` : ''}`);
    }
  }
  for (const row of rows) {
    const runs = results.get(row.name);
    const seconds = runs.map((r) => r.seconds);
    const holdfastCpu = runs.filter((r) => r.cpuSeconds !== undefined).map((r) => r.cpuSeconds);
    const rss = runs.map((r) => Math.max(r.peakRssKiB ?? 0, r.sampledPeakRssKiB ?? 0)).filter(Boolean);
    report.rows.push({
      name: row.name,
      command: row.command,
      runs,
      medianSeconds: median(seconds),
      minSeconds: Math.min(...seconds),
      maxSeconds: Math.max(...seconds),
      medianHoldfastCpuSeconds: holdfastCpu.length ? median(holdfastCpu) : null,
      medianToolCpuSeconds: median(runs.map((r) => r.childCpuSeconds)),
      outputBytes: median(runs.map((r) => r.bytes ?? 0)) || null,
      peakRssMiB: rss.length ? Math.max(...rss) / 1024 : null,
    });
  }

  report.streaming = await streamingRow();
} finally {
  report.loadAtEnd = await loadAverage();
  await writer?.end().catch(() => undefined);
  for (const dir of startedServers) await stopServer(dir);
  await pitrPsql('postgres', `DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).catch((error) => log(`DROP DATABASE ${database} failed: ${error.message}`));
  const left = await dropSlotsOfJobs([...jobIds]);
  if (left.length > 0) log(`slots NOT dropped (drop them by hand): ${left.join(', ')}`);
  report.slotsLeft = left;
  report.slotsAfter = await replicationSlots().catch(() => null);
  await rm(work, { recursive: true, force: true });
}

/**
 * The streaming measurement: a Holdfast process streams the cluster's WAL (a physical job, no base backup needed)
 * while this process writes about `loadMBs` of table data a second into the bench database for `streamSeconds`;
 * its RSS is sampled from here and read as VmHWM (reset once it streams) by the child itself.
 */
async function streamingRow() {
  const runDir = join(work, 'stream');
  await Promise.all(['data', 'dest'].map((dir) => mkdir(join(runDir, dir), { recursive: true })));
  writer = new pg.Client({ host: PITR_SOCKET_DIR, port: cluster.port, user: 'postgres', database });
  await writer.connect();
  await writer.query('CREATE TABLE load_rows (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), payload text NOT NULL)');
  const rowsPerTick = Math.max(1, Math.round((loadMBs * 1e6) / 10 / 200)); // 10 ticks a second, rows of about 200 bytes
  let written = 0;
  log(`streaming: a Holdfast process streams WAL (flush ${flushSeconds} s) while ${loadMBs} MB/s are written for ${streamSeconds} s`);
  let load = null;
  let rssDuringLoadKiB = 0;
  const result = await holdfastChild(
    { mode: 'stream', dataDir: join(runDir, 'data'), destination: join(runDir, 'dest') },
    {
      onLine: (line, child) => {
        if (!line.ready) return;
        load = (async () => {
          const until = Date.now() + streamSeconds * 1000;
          const sampler = setInterval(async () => {
            const status = await readFile(`/proc/${child.pid}/status`, 'utf8').catch(() => '');
            rssDuringLoadKiB = Math.max(rssDuringLoadKiB, Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0));
          }, 250);
          try {
            while (Date.now() < until) {
              const tick = Date.now();
              await writer.query(`INSERT INTO load_rows (payload) SELECT repeat(md5(random()::text), 6) FROM generate_series(1, ${rowsPerTick})`);
              written += rowsPerTick;
              await new Promise((resolve) => setTimeout(resolve, Math.max(0, 100 - (Date.now() - tick))));
            }
            // What was written at the end is archived by the next flush: a few seconds more of streaming.
            await new Promise((resolve) => setTimeout(resolve, (flushSeconds + 3) * 1000));
          } finally {
            clearInterval(sampler);
            child.stdin.end('stop\n');
          }
        })();
      },
    },
  );
  await load;
  const tableBytes = Number(await pitrPsql(database, "SELECT pg_total_relation_size('load_rows')"));
  await rm(runDir, { recursive: true, force: true });
  return { ...result, rowsWritten: written, tableBytes, rssDuringLoadKiB };
}

async function stopServer(dataDir) {
  const pid = await readFile(join(dataDir, 'postmaster.pid'), 'utf8').catch(() => null);
  if (pid) await run('runuser', ['-u', 'postgres', '--', `${PG15_BIN}/pg_ctl`, '-D', dataDir, '-m', 'immediate', 'stop']).catch(() => undefined);
}

function shellQuote(text) {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

const table = (rows) => {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)));
  return rows.map((row) => row.map((cell, column) => String(cell).padEnd(widths[column])).join('  ')).join('\n');
};
console.log(
  `PITR bench: bench database ${mib(report.databaseBytes).toFixed(0)} MiB (cluster ${mib(report.clusterBytes).toFixed(0)} MiB), ${repeats} alternating runs per row, median (min-max); load average ${report.loadAtStart} at start, ${report.loadAtEnd} at end`,
);
console.log(
  table([
    ['row', 'median s', 'min-max s', 'Holdfast CPU s', 'tools CPU s', 'output MiB', 'peak RSS MiB'],
    ...report.rows.map((row) => [
      row.name,
      row.medianSeconds.toFixed(2),
      `${row.minSeconds.toFixed(2)}-${row.maxSeconds.toFixed(2)}`,
      row.medianHoldfastCpuSeconds === null ? '-' : row.medianHoldfastCpuSeconds.toFixed(1),
      row.medianToolCpuSeconds.toFixed(1),
      row.outputBytes ? mib(row.outputBytes).toFixed(1) : '-',
      row.peakRssMiB ? row.peakRssMiB.toFixed(0) : '-',
    ]),
  ]),
);
const s = report.streaming;
if (s) {
  const peak = Math.max(s.peakRssKiB, s.sampledPeakRssKiB, s.rssDuringLoadKiB) / 1024;
  console.log(
    `\nstreaming WAL for ${s.seconds.toFixed(0)} s under ${loadMBs} MB/s of writes (${s.rowsWritten} rows, table ${mib(s.tableBytes).toFixed(0)} MiB), flush ${flushSeconds} s: ` +
      `peak RSS ${peak.toFixed(0)} MiB (VmHWM ${(s.peakRssKiB / 1024).toFixed(0)}, sampled ${(Math.max(s.sampledPeakRssKiB, s.rssDuringLoadKiB) / 1024).toFixed(0)}; ${(s.startupPeakRssKiB / 1024).toFixed(0)} before streaming), ` +
      `${peak < 150 ? 'under' : 'NOT under'} 150 MiB; Holdfast CPU ${s.cpuSeconds.toFixed(1)} s; ${s.segments} pieces archived, ${mib(s.storedBytes).toFixed(1)} MiB stored`,
  );
  const m = s.memoryPeak ?? {};
  console.log(
    `  peaks while streaming: V8 heap ${mib(m.heapTotal ?? 0).toFixed(0)} MiB (used ${mib(m.heapUsed ?? 0).toFixed(0)}), external ${mib(m.external ?? 0).toFixed(0)} MiB (array buffers ${mib(m.arrayBuffers ?? 0).toFixed(0)}), RssAnon ${((m.rssAnonKiB ?? 0) / 1024).toFixed(0)} MiB, RssFile ${((m.rssFileKiB ?? 0) / 1024).toFixed(0)} MiB`,
  );
}
console.log(`\nsetup base backup of the restore rows: ${report.setup.base.seconds.toFixed(2)} s; window ${report.setup.window.start} .. ${report.setup.window.end}`);
if (report.slotsLeft.length > 0) console.log(`SLOTS LEFT ON THE CLUSTER: ${report.slotsLeft.join(', ')}`);
const resultsDir = join(here, 'results');
await mkdir(resultsDir, { recursive: true });
const file = join(resultsDir, `pitr-${report.startedAt.replace(/[:.]/g, '-')}.json`);
await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
console.log(`\nJSON: ${file}`);
