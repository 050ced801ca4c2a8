// Pipeline benchmark of issue 21 (`npm run bench:pipeline`, `npm run bench:pipeline -- --quick`; not part of `npm test`;
// issue 42's table, with the pipelines of today's goals, is table.mjs and `npm run bench:quick`).
// Every Holdfast row and every shell baseline runs HOLDFAST_BENCH_REPEATS times, alternating (round 1: all rows in
// order, round 2: all rows again, ...), so a load spike on the shared machine hits both sides; each figure is the
// median with the spread (min-max). Baselines run at Holdfast's level and at the tool's default, and every row
// records its output size.
//   HOLDFAST_BENCH_SIZE_MB   size of the generated database / directory (default 1024)
//   HOLDFAST_BENCH_REPEATS   runs per row (default 3)
//   HOLDFAST_BENCH_PARTS     postgres,directory,files (default all three; files: a tree of small files of half the size)
//   HOLDFAST_BENCH_ROWS      only these row names (separated by ';'; default all), e.g. to measure RSS at 4 GiB
//   HOLDFAST_BENCH_RESTORE   0 to skip the restore rows
import { spawn } from 'node:child_process';
import { SERVER_ENV, SERVER_NODE_FLAGS } from './lib/server-node-flags.mjs';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateDirectory, generatePostgres, generateSmallFiles } from './lib/generate.mjs';
import { psql, run } from './lib/measure.mjs';

const here = dirname(fileURLToPath(import.meta.url));
// `--quick` (npm run bench:pipeline -- --quick): a small data set, no restore rows, both parts; about a minute on a quiet
// 2-core machine, for before/after comparisons of a pipeline change. Explicit variables still win.
const quick = process.argv.includes('--quick');
const env = quick ? { HOLDFAST_BENCH_SIZE_MB: '64', HOLDFAST_BENCH_RESTORE: '0', ...process.env } : process.env;
const sizeMiB = Number(env.HOLDFAST_BENCH_SIZE_MB ?? 1024);
const repeats = Number(env.HOLDFAST_BENCH_REPEATS ?? 3);
const parts = (env.HOLDFAST_BENCH_PARTS ?? 'postgres,directory,files').split(',').map((part) => part.trim());
// Row names contain commas, so the list is separated by semicolons.
const onlyRows = env.HOLDFAST_BENCH_ROWS ? new Set(env.HOLDFAST_BENCH_ROWS.split(';').map((row) => row.trim())) : null;
// The baseline files are only needed by the baseline restore rows.
const needsBaselineFiles = (names) => !onlyRows || names.some((name) => onlyRows.has(name));
const withRestore = env.HOLDFAST_BENCH_RESTORE !== '0';
if (!(sizeMiB > 0) || !(repeats >= 1)) throw new Error('HOLDFAST_BENCH_SIZE_MB and HOLDFAST_BENCH_REPEATS must be positive');
const user = env.PGUSER ?? 'root';
const PG = `-h 127.0.0.1 -U ${user}`;
const log = (message) => process.stderr.write(`[bench] ${new Date().toISOString().slice(11, 19)} ${message}\n`);
const mib = (bytes) => bytes / 1024 / 1024;
const loadAverage = async () => Number((await readFile('/proc/loadavg', 'utf8')).split(' ')[0]);

/** Runs a shell script; answers wall seconds and, when the script ends in `| wc -c`, the output bytes. */
async function shellRow(script) {
  const started = process.hrtime.bigint();
  const { stdout } = await run('sh', ['-c', `set -e; ${script}`]);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const bytes = Number(stdout.trim());
  return { seconds, bytes: Number.isFinite(bytes) && stdout.trim() !== '' ? bytes : null };
}

// One system key for every child of this run, so a restore child opens the data directory its backup child wrote.
const systemKey = randomBytes(32).toString('hex');

/** Runs holdfast-run.mjs with `spec` in its own process; answers its JSON line (throws unless it succeeded). */
function holdfastChild(spec) {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, join(here, 'holdfast-run.mjs'), JSON.stringify({ systemKey, ...spec })], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...SERVER_ENV } });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stdout.trim().split('\n').at(-1);
      if (code !== 0 || !line) return reject(new Error(`holdfast-run.mjs exited ${code}`));
      const result = JSON.parse(line);
      if (!['Success'].includes(result.status)) return reject(new Error(`${spec.mode} ended ${result.status}: ${result.errors.join('; ')}`));
      resolve(result);
    });
  });
}

/** The figures a row keeps of a benchmark child's answer (backup and restore children answer alike). */
function childFigures(result) {
  return { seconds: result.seconds, cpuSeconds: result.cpuSeconds, bytes: result.size, peakRssKiB: result.peakRssKiB, memory: result.memoryPeak, baselineRssKiB: result.baselineRssKiB, baselineMemory: result.baselineMemory };
}

/** A Holdfast backup row: a fresh data directory and destination(s) per run, removed afterwards unless kept. */
function backupRow(work, kind, target, options, keep) {
  return async (round) => {
    const runDir = join(work, `run-${randomBytes(4).toString('hex')}`);
    const destinations = Array.from({ length: options.destinationCount ?? 1 }, (_, index) => join(runDir, `dest-${index}`));
    await Promise.all([...destinations, join(runDir, 'data')].map((dir) => mkdir(dir, { recursive: true })));
    const result = await holdfastChild({ mode: 'backup', kind, target, dataDir: join(runDir, 'data'), ...options, destinations });
    if (keep && round === 0) keep({ runDir, ...result });
    else await rm(runDir, { recursive: true, force: true });
    return childFigures(result);
  };
}

/** A Holdfast restore row of a kept backup: restores into a fresh database or folder each run. */
function restoreRow(kept, kind) {
  return async () => {
    const backup = kept();
    if (!backup) throw new Error('the backup to restore was not kept (its backup row did not run)');
    const database = `hf_bench_restore_${randomBytes(4).toString('hex')}`;
    const targetPath = join(backup.runDir, `restore-${randomBytes(4).toString('hex')}`);
    if (kind === 'directory') await mkdir(targetPath, { recursive: true });
    try {
      const result = await holdfastChild({ mode: 'restore', dataDir: join(backup.runDir, 'data'), storageId: backup.storageId, file: backup.path, ...(kind === 'postgres' ? { database } : { targetPath }) });
      return childFigures(result);
    } finally {
      if (kind === 'postgres') await psql('postgres', `DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      else await rm(targetPath, { recursive: true, force: true });
    }
  };
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** Runs the rows `repeats` times in alternation; answers per row its runs. */
async function runRounds(rows) {
  const selected = rows.filter((row) => !onlyRows || onlyRows.has(row.name));
  const results = new Map(selected.map((row) => [row.name, []]));
  for (let round = 0; round < repeats; round++) {
    for (const row of selected) {
      const load = await loadAverage();
      log(`round ${round + 1}/${repeats}: ${row.name} (load ${load.toFixed(1)})`);
      const result = await row.run(round);
      results.get(row.name).push({ ...result, load });
      log(`  ${result.seconds.toFixed(2)} s${result.cpuSeconds ? ` (Holdfast CPU ${(result.cpuSeconds.user + result.cpuSeconds.system).toFixed(2)} s)` : ''}${result.bytes ? `, ${mib(result.bytes).toFixed(1)} MiB out` : ''}${result.peakRssKiB ? `, peak RSS ${(result.peakRssKiB / 1024).toFixed(0)} MiB` : ''}`);
    }
  }
  return selected.map((row) => {
    const runs = results.get(row.name);
    const seconds = runs.map((r) => r.seconds);
    const rss = runs.map((r) => r.peakRssKiB).filter(Boolean);
    return {
      name: row.name,
      side: row.side,
      command: row.command,
      runs,
      medianSeconds: median(seconds),
      minSeconds: Math.min(...seconds),
      maxSeconds: Math.max(...seconds),
      outputBytes: median(runs.map((r) => r.bytes ?? 0)) || null,
      peakRssMiB: rss.length ? Math.max(...rss) / 1024 : null,
      loads: runs.map((r) => r.load),
    };
  });
}

function postgresRows(work, database, keepers) {
  const dumpBase = join(work, 'baseline.dump.gz');
  const dumpBaseZstd = join(work, 'baseline.dump.zst');
  // Like for like with Holdfast's GZIP backup, which holds a `-Z0` dump compressed by the engine.
  const dumpBaseRawGzip = join(work, 'baseline-z0.dump.gz');
  const rows = [
    { name: 'pg: pg_dump -Fc | gzip (tool default -6)', side: 'baseline', command: `pg_dump -Fc ${PG} ${database} | gzip | wc -c` },
    { name: 'pg: Holdfast GZIP 3 (default: pg_dump -Z0, gzip members on threads)', side: 'holdfast', command: 'compression GZIP, pgCompression ""', job: { compression: 'GZIP' }, keep: 'pgGzip' },
    { name: 'pg: pg_dump -Fc | gzip -3 (Holdfast level)', side: 'baseline', command: `pg_dump -Fc ${PG} ${database} | gzip -3 | wc -c` },
    { name: 'pg: Holdfast GZIP 3, pg_dump zlib on (the old default, pgCompression 6)', side: 'holdfast', command: 'compression GZIP, pgCompression "6"', job: { compression: 'GZIP', pgCompression: '6' } },
    { name: 'pg: pg_dump -Fc -Z0 | gzip -3', side: 'baseline', command: `pg_dump -Fc -Z0 ${PG} ${database} | gzip -3 | wc -c` },
    { name: 'pg: Holdfast ZSTD (new default: -Z0, zstd 3, threads auto)', side: 'holdfast', command: 'compression ZSTD', job: { compression: 'ZSTD' }, keep: 'pgZstd' },
    { name: 'pg: pg_dump -Fc -Z0 | zstd -3 -T0', side: 'baseline', command: `pg_dump -Fc -Z0 ${PG} ${database} | zstd -3 -T0 -q -c | wc -c` },
    { name: 'pg: Holdfast ZSTD level 1', side: 'holdfast', command: 'compression ZSTD, compressionLevel 1', job: { compression: 'ZSTD', compressionLevel: 1 } },
    { name: 'pg: pg_dump -Fc -Z0 | zstd -1 -T0', side: 'baseline', command: `pg_dump -Fc -Z0 ${PG} ${database} | zstd -1 -T0 -q -c | wc -c` },
    { name: 'pg: Holdfast ZSTD encrypted', side: 'holdfast', command: 'compression ZSTD, encryption profile', job: { compression: 'ZSTD', encrypt: true } },
    { name: 'pg: Holdfast ZSTD age-encrypted (public-key profile)', side: 'holdfast', command: 'compression ZSTD, public-key encryption profile (age format)', job: { compression: 'ZSTD', encrypt: 'age' } },
    { name: 'pg: pg_dump -Fc -Z0 > /dev/null (raw dump rate)', side: 'baseline', command: `pg_dump -Fc -Z0 ${PG} ${database} | wc -c` },
    { name: 'pg: Holdfast ZSTD to 3 local destinations', side: 'holdfast', command: 'compression ZSTD, 3 destinations', job: { compression: 'ZSTD', destinationCount: 3 } },
  ];
  const restoreRows = [
    { name: 'pg restore: Holdfast of the GZIP backup', side: 'holdfast', command: 'POST /api/storage/:id/restore', restore: 'pgGzip' },
    { name: 'pg restore: gunzip | pg_restore', side: 'baseline', command: `createdb … && gunzip -c baseline.dump.gz | pg_restore --no-owner --no-privileges -d …`, restoreFrom: dumpBase, tool: 'gunzip -c' },
    { name: 'pg restore: gunzip | pg_restore (of pg_dump -Fc -Z0 | gzip -3, like for like)', side: 'baseline', command: `createdb … && gunzip -c baseline-z0.dump.gz | pg_restore --no-owner --no-privileges -d …`, restoreFrom: dumpBaseRawGzip, tool: 'gunzip -c' },
    { name: 'pg restore: Holdfast of the ZSTD backup', side: 'holdfast', command: 'POST /api/storage/:id/restore', restore: 'pgZstd' },
    { name: 'pg restore: zstd -d | pg_restore', side: 'baseline', command: `createdb … && zstd -dc baseline.dump.zst | pg_restore --no-owner --no-privileges -d …`, restoreFrom: dumpBaseZstd, tool: 'zstd -dcq' },
  ];
  return {
    prepare: async () => {
      await run('sh', ['-c', `pg_dump -Fc ${PG} ${database} | gzip -3 > '${dumpBase}'`]);
      await run('sh', ['-c', `pg_dump -Fc -Z0 ${PG} ${database} | zstd -3 -T0 -q -c > '${dumpBaseZstd}'`]);
      await run('sh', ['-c', `pg_dump -Fc -Z0 ${PG} ${database} | gzip -3 > '${dumpBaseRawGzip}'`]);
    },
    rows: [...rows, ...(withRestore ? restoreRows : [])].map((row) => ({
      ...row,
      run: row.job
        ? backupRow(work, 'postgres', database, row.job, row.keep ? (kept) => (keepers[row.keep] = kept) : null)
        : row.restore
          ? restoreRow(() => keepers[row.restore], 'postgres')
          : row.restoreFrom
            ? async () => {
                const target = `hf_bench_base_${randomBytes(4).toString('hex')}`;
                try {
                  return await shellRow(`createdb ${PG} ${target} && ${row.tool} '${row.restoreFrom}' | pg_restore ${PG} --no-owner --no-privileges -d ${target}`);
                } finally {
                  await psql('postgres', `DROP DATABASE IF EXISTS "${target}" WITH (FORCE)`);
                }
              }
            : () => shellRow(row.command),
    })),
  };
}

function directoryRows(work, source, keepers) {
  const tarBase = join(work, 'baseline.tar.gz');
  const rows = [
    { name: 'dir: tar | gzip (tool default -6)', side: 'baseline', command: `tar -cf - -C '${source}' . | gzip | wc -c` },
    { name: 'dir: Holdfast GZIP 3', side: 'holdfast', command: 'compression GZIP', job: { compression: 'GZIP' }, keep: 'dirGzip' },
    { name: 'dir: tar | gzip -3 (Holdfast level)', side: 'baseline', command: `tar -cf - -C '${source}' . | gzip -3 | wc -c` },
    { name: 'dir: Holdfast ZSTD (threads auto)', side: 'holdfast', command: 'compression ZSTD', job: { compression: 'ZSTD' } },
    { name: 'dir: tar | zstd -3 -T0', side: 'baseline', command: `tar -cf - -C '${source}' . | zstd -3 -T0 -q -c | wc -c` },
  ];
  const restoreRows = [
    { name: 'dir restore: Holdfast of the GZIP backup', side: 'holdfast', command: 'POST /api/storage/:id/restore (targetPath)', restore: 'dirGzip' },
    { name: 'dir restore: gunzip | tar -x', side: 'baseline', command: 'gunzip -c baseline.tar.gz | tar -x -C <fresh dir>', untar: true },
  ];
  return folderRowSet(work, source, keepers, tarBase, [...rows, ...(withRestore ? restoreRows : [])]);
}

// A tree of small files (what source trees, mail folders and node_modules look like): the per-file cost, not the
// bytes, decides these rows.
function smallFileRows(work, source, keepers) {
  const tarBase = join(work, 'small-files.tar.gz');
  const rows = [
    { name: 'files: tar | gzip (tool default -6)', side: 'baseline', command: `tar -cf - -C '${source}' . | gzip | wc -c` },
    { name: 'files: Holdfast GZIP 3', side: 'holdfast', job: { compression: 'GZIP' }, keep: 'filesGzip' },
    { name: 'files: Holdfast ZSTD (threads auto)', side: 'holdfast', job: { compression: 'ZSTD' } },
    { name: 'files: tar | zstd -3 -T0', side: 'baseline', command: `tar -cf - -C '${source}' . | zstd -3 -T0 -q -c | wc -c` },
  ];
  const restoreRows = [
    { name: 'files restore: Holdfast of the GZIP backup', side: 'holdfast', command: 'POST /api/storage/:id/restore (targetPath)', restore: 'filesGzip' },
    { name: 'files restore: gunzip | tar -x', side: 'baseline', command: 'gunzip -c small-files.tar.gz | tar -x -C <fresh dir>', untar: true },
  ];
  return folderRowSet(work, source, keepers, tarBase, [...rows, ...(withRestore ? restoreRows : [])]);
}

/**
 * The runs of rows over a folder: a Holdfast backup (`job`, kept for a restore row when `keep` names it), a Holdfast
 * restore of a kept backup (`restore`), `gunzip | tar -x` of the baseline archive into a fresh folder (`untar`), or a
 * shell command. `prepare` writes the baseline archive (`tar | gzip -3` of the folder).
 */
function folderRowSet(work, source, keepers, tarBase, rows) {
  return {
    prepare: () => run('sh', ['-c', `tar -cf - -C '${source}' . | gzip -3 > '${tarBase}'`]),
    rows: rows.map((row) => ({
      ...row,
      command: row.command ?? `compression ${row.job.compression}`,
      run: row.job
        ? backupRow(work, 'directory', source, row.job, row.keep ? (kept) => (keepers[row.keep] = kept) : null)
        : row.restore
          ? restoreRow(() => keepers[row.restore], 'directory')
          : row.untar
            ? () => untarRow(work, tarBase)
            : () => shellRow(row.command),
    })),
  };
}

/** `gunzip -c <archive> | tar -x` into a fresh folder, removed afterwards. */
async function untarRow(work, tarBase) {
  const target = join(work, `untar-${randomBytes(4).toString('hex')}`);
  await mkdir(target);
  try {
    return await shellRow(`gunzip -c '${tarBase}' | tar -x -C '${target}'`);
  } finally {
    await rm(target, { recursive: true, force: true });
  }
}

const work = await mkdtemp(join(tmpdir(), 'holdfast-pipeline-bench-'));
const report = { startedAt: new Date().toISOString(), sizeMiB, repeats, node: process.version, loadAtStart: await loadAverage(), parts: {} };
const keepers = {};
try {
  if (parts.includes('postgres')) {
    const database = `hf_bench_${randomBytes(4).toString('hex')}`;
    log(`postgres: generating ${sizeMiB} MiB database ${database}`);
    try {
      const sourceBytes = await generatePostgres(database, sizeMiB * 1024 * 1024);
      const set = postgresRows(work, database, keepers);
      if (withRestore && needsBaselineFiles(['pg restore: gunzip | pg_restore', 'pg restore: gunzip | pg_restore (of pg_dump -Fc -Z0 | gzip -3, like for like)', 'pg restore: zstd -d | pg_restore'])) await set.prepare();
      report.parts.postgres = { sourceBytes, rows: await runRounds(set.rows) };
    } finally {
      await psql('postgres', `DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
    }
  }
  if (parts.includes('directory')) {
    const source = join(work, 'directory-source');
    log(`directory: generating ${sizeMiB} MiB under ${source}`);
    const sourceBytes = await generateDirectory(source, sizeMiB * 1024 * 1024);
    const set = directoryRows(work, source, keepers);
    if (withRestore && needsBaselineFiles(['dir restore: gunzip | tar -x'])) await set.prepare();
    report.parts.directory = { sourceBytes, rows: await runRounds(set.rows) };
    await rm(source, { recursive: true, force: true });
  }
  if (parts.includes('files')) {
    const source = join(work, 'small-files-source');
    const sourceBytes = Math.round((sizeMiB * 1024 * 1024) / 2);
    log(`files: generating ${mib(sourceBytes).toFixed(0)} MiB of small files under ${source}`);
    const files = await generateSmallFiles(source, sourceBytes);
    log(`files: ${files} files`);
    const set = smallFileRows(work, source, keepers);
    if (withRestore && needsBaselineFiles(['files restore: gunzip | tar -x'])) await set.prepare();
    report.parts.files = { sourceBytes, files, rows: await runRounds(set.rows) };
  }
} finally {
  report.loadAtEnd = await loadAverage();
  await rm(work, { recursive: true, force: true });
}

const table = (rows) => {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => String(row[column]).length)));
  return rows.map((row) => row.map((cell, column) => String(cell).padEnd(widths[column])).join('  ')).join('\n');
};
console.log(`pipeline bench: ${sizeMiB} MiB, ${repeats} alternating runs per row, median (min-max); load average ${report.loadAtStart} at start, ${report.loadAtEnd} at end`);
for (const [part, { sourceBytes, rows }] of Object.entries(report.parts)) {
  console.log(`\n${part}: source ${mib(sourceBytes).toFixed(0)} MiB`);
  console.log(
    table([
      ['row', 'median s', 'min-max s', 'MiB/s (source)', 'output MiB', 'peak RSS MiB', 'load'],
      ...rows.map((row) => [
        row.name,
        row.medianSeconds.toFixed(2),
        `${row.minSeconds.toFixed(2)}-${row.maxSeconds.toFixed(2)}`,
        (mib(sourceBytes) / row.medianSeconds).toFixed(1),
        row.outputBytes ? mib(row.outputBytes).toFixed(1) : '-',
        row.peakRssMiB ? row.peakRssMiB.toFixed(0) : '-',
        `${Math.min(...row.loads).toFixed(1)}-${Math.max(...row.loads).toFixed(1)}`,
      ]),
    ]),
  );
}
const ratio = (part, holdfast, baseline) => {
  const rows = report.parts[part]?.rows ?? [];
  const h = rows.find((row) => row.name === holdfast);
  const b = rows.find((row) => row.name === baseline);
  return h && b ? b.medianSeconds / h.medianSeconds : null;
};
const comparisons = [
  ['postgres', 'pg: Holdfast GZIP 3 (default: pg_dump -Z0, gzip members on threads)', 'pg: pg_dump -Fc | gzip (tool default -6)', 'speed vs baseline (acceptance 1: >= 0.97)'],
  ['postgres', 'pg: Holdfast GZIP 3 (default: pg_dump -Z0, gzip members on threads)', 'pg: pg_dump -Fc -Z0 | gzip -3', 'speed vs baseline'],
  ['postgres', 'pg: Holdfast GZIP 3, pg_dump zlib on (the old default, pgCompression 6)', 'pg: pg_dump -Fc | gzip (tool default -6)', 'speed vs baseline (the old GZIP default)'],
  ['postgres', 'pg: Holdfast ZSTD (new default: -Z0, zstd 3, threads auto)', 'pg: pg_dump -Fc | gzip (tool default -6)', 'speed vs baseline (acceptance 4: >= 3)'],
  ['postgres', 'pg: Holdfast ZSTD (new default: -Z0, zstd 3, threads auto)', 'pg: pg_dump -Fc -Z0 | zstd -3 -T0', 'speed vs baseline'],
  ['postgres', 'pg: Holdfast ZSTD (new default: -Z0, zstd 3, threads auto)', 'pg: pg_dump -Fc -Z0 > /dev/null (raw dump rate)', 'speed vs raw dump (acceptance 4: >= 0.67)'],
  ['postgres', 'pg: Holdfast ZSTD level 1', 'pg: pg_dump -Fc | gzip (tool default -6)', 'speed vs baseline (level 1)'],
  ['postgres', 'pg: Holdfast ZSTD level 1', 'pg: pg_dump -Fc -Z0 > /dev/null (raw dump rate)', 'speed vs raw dump (level 1)'],
  ['postgres', 'pg: Holdfast ZSTD encrypted', 'pg: Holdfast ZSTD (new default: -Z0, zstd 3, threads auto)', 'speed encrypted / unencrypted (acceptance 3: >= 0.91)'],
  ['postgres', 'pg: Holdfast ZSTD age-encrypted (public-key profile)', 'pg: Holdfast ZSTD encrypted', 'speed age / HFENC (issue 45: >= 0.9)'],
  ['postgres', 'pg: Holdfast ZSTD to 3 local destinations', 'pg: Holdfast ZSTD (new default: -Z0, zstd 3, threads auto)', 'speed 3 destinations / 1 (acceptance 3: >= 0.87)'],
  ['postgres', 'pg restore: Holdfast of the GZIP backup', 'pg restore: gunzip | pg_restore', 'restore speed vs baseline (zlib inside the baseline dump)'],
  ['postgres', 'pg restore: Holdfast of the GZIP backup', 'pg restore: gunzip | pg_restore (of pg_dump -Fc -Z0 | gzip -3, like for like)', 'restore speed vs baseline, like for like (acceptance 3: >= 0.9)'],
  ['postgres', 'pg restore: Holdfast of the ZSTD backup', 'pg restore: zstd -d | pg_restore', 'restore speed vs baseline'],
  ['directory', 'dir: Holdfast GZIP 3', 'dir: tar | gzip (tool default -6)', 'speed vs baseline (acceptance 1: >= 0.95)'],
  ['directory', 'dir: Holdfast GZIP 3', 'dir: tar | gzip -3 (Holdfast level)', 'speed vs baseline'],
  ['directory', 'dir: Holdfast ZSTD (threads auto)', 'dir: tar | zstd -3 -T0', 'speed vs baseline'],
  ['directory', 'dir restore: Holdfast of the GZIP backup', 'dir restore: gunzip | tar -x', 'restore speed vs baseline (acceptance 3: >= 0.9)'],
  ['files', 'files: Holdfast GZIP 3', 'files: tar | gzip (tool default -6)', 'speed vs baseline, small files'],
  ['files', 'files: Holdfast ZSTD (threads auto)', 'files: tar | zstd -3 -T0', 'speed vs baseline, small files'],
  ['files', 'files restore: Holdfast of the GZIP backup', 'files restore: gunzip | tar -x', 'restore speed vs baseline, small files'],
];
const computed = comparisons.map(([part, holdfast, baseline, what]) => ({ part, holdfast, baseline, what, ratio: ratio(part, holdfast, baseline) })).filter((c) => c.ratio !== null);
if (computed.length > 0) {
  console.log('\nratios of medians (baseline seconds / Holdfast seconds; > 1: Holdfast faster)');
  console.log(table([['Holdfast row', 'against', 'ratio', 'meaning'], ...computed.map((c) => [c.holdfast, c.baseline, c.ratio.toFixed(2), c.what])]));
}
report.comparisons = computed;
const resultsDir = join(here, 'results');
await mkdir(resultsDir, { recursive: true });
const file = join(resultsDir, `pipeline-${report.startedAt.replace(/[:.]/g, '-')}.json`);
await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
console.log(`\nJSON: ${file}`);
