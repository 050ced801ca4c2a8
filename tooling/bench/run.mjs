// Holdfast benchmarks (`npm run bench`; not part of `npm test`). Each measurement is compared with a baseline run
// in the same invocation, because the machines are shared and absolute times drift. The first part, `table`, is
// issue 42's benchmark table (table.mjs: every row against its shell pipeline, medians of alternating runs, CPU per
// GiB, peak RSS, and a Markdown table for docs/benchmarks.md); its own variables are documented there.
//   HOLDFAST_BENCH_TABLE_SIZE_MB size of the table's databases and folder (default 1024 = 1 GiB; the table reads it
//                                as its HOLDFAST_BENCH_SIZE_MB)
//   HOLDFAST_BENCH_SIZE_MB      size of the generated database and directory (default 2048 = 2 GiB)
//   HOLDFAST_BENCH_HISTORY_ROWS executions seeded for the history benchmark (default 100000)
//   HOLDFAST_BENCH_REQUESTS     timed requests per history query (default 25)
//   HOLDFAST_BENCH_PARTS        comma-separated subset of table,postgres,directory,history,mysql,redis,sqlite (default all)
//   HOLDFAST_BENCH_SOURCE_SIZE_MB  size of the data seeded for the mysql, redis and sqlite rows (default 200)
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateDirectory, generatePostgres } from './lib/generate.mjs';
import { bytesUnder, measureNode, psql, timeShell } from './lib/measure.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const env = process.env;
const sizeBytes = Number(env.HOLDFAST_BENCH_SIZE_MB ?? 2048) * 1024 * 1024;
const historyRows = Number(env.HOLDFAST_BENCH_HISTORY_ROWS ?? 100_000);
const requests = Number(env.HOLDFAST_BENCH_REQUESTS ?? 25);
const SOURCE_ENGINES = ['mysql', 'redis', 'sqlite'];
const ALL_PARTS = ['table', 'postgres', 'directory', 'history', ...SOURCE_ENGINES];
const sourceSizeMiB = Number(env.HOLDFAST_BENCH_SOURCE_SIZE_MB ?? 200);
const parts = (env.HOLDFAST_BENCH_PARTS ?? ALL_PARTS.join(',')).split(',').map((part) => part.trim());
for (const [name, value] of Object.entries({ HOLDFAST_BENCH_SIZE_MB: sizeBytes, HOLDFAST_BENCH_HISTORY_ROWS: historyRows, HOLDFAST_BENCH_REQUESTS: requests, HOLDFAST_BENCH_SOURCE_SIZE_MB: sourceSizeMiB })) {
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
}
const unknownParts = parts.filter((part) => !ALL_PARTS.includes(part));
if (unknownParts.length > 0) throw new Error(`HOLDFAST_BENCH_PARTS: unknown part(s) ${unknownParts.join(', ')}; use ${ALL_PARTS.join(', ')}`);

const tableSizeMiB = Number(env.HOLDFAST_BENCH_TABLE_SIZE_MB ?? 1024);
if (!(tableSizeMiB > 0)) throw new Error('HOLDFAST_BENCH_TABLE_SIZE_MB must be a positive number');
const mib = (bytes) => bytes / 1024 / 1024;
const log = (message) => process.stderr.write(`[bench] ${message}\n`);

/** Runs the Holdfast child against `target` and the baseline script; answers one comparison row. */
async function compare(kind, target, sourceBytes, baselineScript, work) {
  log(`${kind}: baseline: ${baselineScript}`);
  const baselineSeconds = await timeShell(baselineScript);
  const destination = join(work, `${kind}-dest`);
  const dataDir = join(work, `${kind}-data`);
  const tmp = join(work, `${kind}-tmp`);
  await Promise.all([destination, dataDir, tmp].map((dir) => mkdir(dir, { recursive: true })));
  log(`${kind}: Holdfast backup (GZIP, local destination)`);
  // The job as `npm run bench` always measured it: GZIP, one local destination, verification (re-read) on.
  const spec = { mode: 'backup', kind, target, destinations: [destination], dataDir, compression: 'GZIP', skipVerification: false };
  const holdfast = await measureNode(join(here, 'holdfast-run.mjs'), [JSON.stringify(spec)], tmp);
  if (holdfast.status !== 'Success') throw new Error(`${kind}: Holdfast backup ended ${holdfast.status}: ${holdfast.errors.join('; ')}`);
  const baselineMiBs = mib(sourceBytes) / baselineSeconds;
  const holdfastMiBs = mib(sourceBytes) / holdfast.seconds;
  return {
    kind,
    sourceBytes,
    baseline: baselineScript,
    baselineSeconds,
    baselineMiBs,
    holdfastSeconds: holdfast.seconds,
    holdfastMiBs,
    throughputRatio: holdfastMiBs / baselineMiBs,
    backupBytes: holdfast.size,
    peakRssMiB: holdfast.peakRssKiB / 1024,
    sampledPeakRssMiB: holdfast.sampledPeakRssKiB / 1024,
    tempBytesPeak: holdfast.peakTmpBytes,
    tempBytesAfter: holdfast.finalTmpBytes,
  };
}

/**
 * Runs one source benchmark script (sources/<engine>.mjs: the engine's own tool piped to gzip, then the adapter's
 * dump + gzip, same data) in its own process, and answers the JSON rows it prints (Redis prints two: rdb, logical).
 */
function sourceBench(engine) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(here, 'sources', `${engine}.mjs`)], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, HOLDFAST_BENCH_SIZE_MB: String(sourceSizeMiB) },
    });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code !== 0) return reject(new Error(`sources/${engine}.mjs exited ${code}`));
      resolve(stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line)));
    });
  });
}

/** Runs table.mjs (issue 42's table) with its output on this process's; rejects when it fails. */
function tableBench() {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(here, 'table.mjs')], { stdio: 'inherit', env: { ...process.env, HOLDFAST_BENCH_SIZE_MB: String(tableSizeMiB) } });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`table.mjs exited ${code}`))));
  });
}

if (parts.includes('table')) {
  log(`table: issue 42's benchmark table at ${tableSizeMiB} MiB (table.mjs)`);
  await tableBench();
}

const work = await mkdtemp(join(tmpdir(), 'holdfast-bench-'));
const report = { startedAt: new Date().toISOString(), sizeBytes, sourceSizeMiB, historyRows, requests, node: process.version, backups: [], sources: [], history: null, notes: [] };
try {
  if (parts.includes('postgres')) {
    const database = `hf_bench_${randomBytes(4).toString('hex')}`;
    log(`postgres: generating ${mib(sizeBytes).toFixed(0)} MiB database ${database}`);
    try {
      const size = await generatePostgres(database, sizeBytes);
      const user = env.PGUSER ?? 'root';
      report.backups.push(await compare('postgres', database, size, `pg_dump -Fc -h 127.0.0.1 -U ${user} ${database} | gzip > /dev/null`, work));
    } finally {
      await psql('postgres', `DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    }
  }
  if (parts.includes('directory')) {
    const source = join(work, 'directory-source');
    log(`directory: generating ${mib(sizeBytes).toFixed(0)} MiB under ${source}`);
    const size = await generateDirectory(source, sizeBytes);
    report.backups.push(await compare('directory', source, size, `tar -cf - -C '${source}' . | gzip > /dev/null`, work));
    await rm(source, { recursive: true, force: true });
  }
  for (const engine of SOURCE_ENGINES.filter((part) => parts.includes(part))) {
    log(`${engine}: source benchmark, ${sourceSizeMiB} MiB (sources/${engine}.mjs)`);
    report.sources.push(...(await sourceBench(engine)));
  }
  if (parts.includes('history')) {
    log(`history: seeding ${historyRows} executions on PostgreSQL, ${requests} requests per query`);
    // Loaded here: it needs the built server packages, which the other parts do not.
    const { historyBench } = await import('./lib/history-bench.mjs');
    report.history = await historyBench({ rows: historyRows, requests });
  }
} finally {
  report.workLeftBytes = await bytesUnder(work);
  await rm(work, { recursive: true, force: true });
}

const table = (rows) => {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)));
  return rows.map((row) => row.map((cell, column) => String(cell).padEnd(widths[column])).join('  ')).join('\n');
};
if (report.backups.length > 0) {
  console.log(
    table([
      ['backup', 'source MiB', 'baseline MiB/s', 'Holdfast MiB/s', 'ratio', 'peak RSS MiB', 'temp bytes (peak/after)'],
      ...report.backups.map((row) => [
        row.kind,
        mib(row.sourceBytes).toFixed(0),
        row.baselineMiBs.toFixed(1),
        row.holdfastMiBs.toFixed(1),
        row.throughputRatio.toFixed(2),
        row.peakRssMiB.toFixed(0),
        `${row.tempBytesPeak}/${row.tempBytesAfter}`,
      ]),
    ]),
  );
}
if (report.sources.length > 0) {
  // Throughput = uncompressed dump bytes per second; both sides end in gzip level 6 to a file.
  console.log(`\nsources (${sourceSizeMiB} MiB seeded): the engine's own tool piped to gzip vs the adapter's dump + gzip, same run`);
  console.log(
    table([
      ['source', 'dump MiB', 'baseline', 'baseline MiB/s', 'Holdfast MiB/s', 'ratio', 'peak RSS MiB baseline', 'peak RSS MiB Holdfast (growth in dump)'],
      ...report.sources.map((row) => [
        row.engine,
        mib(row.adapter.dumpBytes).toFixed(0),
        row.baseline.label,
        row.baselineMiBs.toFixed(1),
        row.adapterMiBs.toFixed(1),
        row.ratio.toFixed(2),
        (row.baseline.peakRssKiB / 1024).toFixed(0),
        `${(row.adapter.peakRssKiB / 1024).toFixed(0)} (+${(row.adapter.rssGrowthKiB / 1024).toFixed(0)})`,
      ]),
    ]),
  );
  for (const row of report.sources.filter((source) => source.plainBackup)) {
    console.log(`${row.engine}: sqlite3 .backup alone (no compression) ${row.plainBackup.MiBs.toFixed(1)} MiB/s, ${row.plainBackup.seconds.toFixed(2)} s`);
  }
}
if (report.history) {
  console.log(`\nhistory: ${historyRows} executions seeded in ${report.history.seedSeconds.toFixed(1)} s; target median < 100 ms`);
  console.log(
    table([
      ['query', 'matching', 'median ms', 'p95 ms', 'index'],
      ...report.history.results.map((row) => [row.query, row.matching, row.medianMs.toFixed(1), row.p95Ms.toFixed(1), row.usesIndex === undefined ? '-' : row.usesIndex ? 'yes' : 'NO']),
    ]),
  );
}
const resultsDir = join(here, 'results');
await mkdir(resultsDir, { recursive: true });
const file = join(resultsDir, `bench-${report.startedAt.replace(/[:.]/g, '-')}.json`);
await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
console.log(`\nJSON: ${file}`);
