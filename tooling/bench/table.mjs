// The benchmark table of issue 42 (`npm run bench` runs it first; `npm run bench:quick` = `table.mjs --quick`; not
// part of `npm test`). Every row sets a Holdfast run against the shell pipeline a skilled operator would write for
// the same output (same codec and level), measured in the same run: each Holdfast run and each pipeline runs
// HOLDFAST_BENCH_REPEATS times, alternating (round 1: every run of a source in order, round 2: all again, ...), so a
// load spike on the shared machine hits both sides. Rows (goal in brackets; ratio = Holdfast median / pipeline median):
//   PostgreSQL, ZSTD            pg_dump -Fc -Z0 | zstd -3 -T0 > f                       (<= 1.15x)
//   PostgreSQL, GZIP            pg_dump -Fc -Z0 | pigz -3 > f (<= 1.15x), and | gzip -3 > f (printed)
//   MariaDB, ZSTD               mariadb-dump --single-transaction (+ the adapter's other flags) | zstd -3 -T0 > f (<= 1.15x)
//   directory of 8 MiB files    tar -cf - dir | zstd -3 -T0 > f                          (<= 1.15x)
//   small files (generated 0-24 KiB tree of half the size; node_modules)  the same tar pipe (<= 1.5x)
//   restore of each             zstd -dc f | pg_restore, | mariadb, | tar -x; gzip -dc f | pg_restore (<= 1.15x)
//   encrypted / plain           Holdfast with a symmetric encryption profile against Holdfast plain, backup and
//                               restore of every ZSTD source (<= 1.05)
// Every row also prints CPU seconds per GiB of source on both sides (Holdfast: its process and the tools it ran;
// the pipeline: the sum of its processes, getrusage of children) and their ratio (<= 1.25x), and the peak RSS of the
// Holdfast process (< 150 MiB). At the end: one Markdown table to paste as docs/benchmarks.md's current figures.
// Variables (explicit ones win over --quick):
//   HOLDFAST_BENCH_SIZE_MB      size of the generated PostgreSQL and MariaDB databases and of the 8 MiB-file folder;
//                               the small-file tree is half of it (default 1024; --quick: 32)
//   HOLDFAST_BENCH_REPEATS      runs per Holdfast run and per pipeline (default 3; --quick: 1, meant to print every row
//                               in about a minute; HOLDFAST_BENCH_REPEATS=3 npm run bench:quick for spreads)
//   HOLDFAST_BENCH_TABLE_PARTS  postgres,mariadb,directory,files,node_modules (default all)
//   HOLDFAST_BENCH_NODE_MODULES the folder of the node_modules row, read in place and never written (default the
//                               repository's node_modules; --quick: node_modules/es-toolkit, about 4,300 small files)
//   HOLDFAST_BENCH_RESTORE      0: no restore rows;  HOLDFAST_BENCH_ENCRYPTED  0: no encrypted rows
//   HOLDFAST_BENCH_HASHED       0: no like-for-like rows. By default every ZSTD backup is also set against its pipeline
//                               plus what SPEC makes Holdfast compute on the stored bytes: `... | zstd | tee P1 P2 > f`
//                               with `openssl dgst -sha256 < P1` and `openssl dgst -md5 < P2` reading the same output
//                               at once (OpenSSL, as Holdfast hashes; coreutils' sha256sum is 7x slower here). Printed,
//                               no goal: it says how much of a gap is the checksums SPEC requires
//   HOLDFAST_BENCH_ONE_CHILD    1: one long-lived Holdfast child (one stack) runs every backup and restore, its peak RSS
//                               reset before each (default 0: a fresh child per run, as a server's first backup;
//                               --quick: 1, which took bench:quick from 3-4 min to about a minute)
//   HOLDFAST_BENCH_INPROCESS    1: every ZSTD/GZIP backup also runs with HOLDFAST_EXTERNAL_COMPRESSOR=off (the engine's
//                               in-process codec), a row of its own against the same pipeline (before/after of issue 42's
//                               external compressor; Holdfast uses zstd/pigz in a child process when they are installed)
//   HOLDFAST_BENCH_VARIANT      `label:NAME=value[,NAME=value]`: every ZSTD backup also runs with these variables, a row of
//                               its own against the same pipeline, alternating with the plain run (a before/after of a
//                               server setting in one run, e.g. `main-thread hashes:HOLDFAST_HASH_WORKER=off`)
// pigz missing: the pigz row is skipped and says so (install: node tooling/test-services/pigz.mjs).
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { cpus, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from './lib/measure.mjs';
import { holdfastRun, shellRun, startHoldfastServer } from './lib/runners.mjs';
import { markdownTable, plainTable, rowFigures } from './lib/table-report.mjs';
import { folderSource, generateDirectory, generateSmallFiles, mariadbSource, postgresSource } from './lib/table-sources.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '..', '..');
const quick = process.argv.includes('--quick');
const QUICK_DEFAULTS = { HOLDFAST_BENCH_SIZE_MB: '32', HOLDFAST_BENCH_REPEATS: '1', HOLDFAST_BENCH_NODE_MODULES: join(repoRoot, 'node_modules', 'es-toolkit'), HOLDFAST_BENCH_ONE_CHILD: '1' };
const env = quick ? { ...QUICK_DEFAULTS, ...process.env } : process.env;
const sizeMiB = Number(env.HOLDFAST_BENCH_SIZE_MB ?? 1024);
const repeats = Number(env.HOLDFAST_BENCH_REPEATS ?? 3);
const ALL_PARTS = ['postgres', 'mariadb', 'directory', 'files', 'node_modules'];
const parts = (env.HOLDFAST_BENCH_TABLE_PARTS ?? ALL_PARTS.join(',')).split(',').map((part) => part.trim());
const nodeModules = env.HOLDFAST_BENCH_NODE_MODULES ?? join(repoRoot, 'node_modules');
const withRestore = env.HOLDFAST_BENCH_RESTORE !== '0';
const withEncrypted = env.HOLDFAST_BENCH_ENCRYPTED !== '0';
const withHashed = env.HOLDFAST_BENCH_HASHED !== '0';
// Before/after rows of the external compressor (zstd/pigz in a child process, issue 42): the same backup with it off.
const withInProcess = env.HOLDFAST_BENCH_INPROCESS === '1';
const IN_PROCESS_ENV = { HOLDFAST_EXTERNAL_COMPRESSOR: 'off' };
// One long-lived Holdfast child for every run (holdfast-run.mjs --serve) instead of a fresh one per run.
const oneChild = env.HOLDFAST_BENCH_ONE_CHILD === '1';
// A variant of every ZSTD backup with some variables set (HOLDFAST_BENCH_VARIANT), or null.
const variant = (() => {
  const raw = env.HOLDFAST_BENCH_VARIANT;
  if (!raw) return null;
  const colon = raw.indexOf(':');
  if (colon < 1) throw new Error(`HOLDFAST_BENCH_VARIANT must be label:NAME=value[,NAME=value], got "${raw}"`);
  const pairs = raw.slice(colon + 1).split(',').map((pair) => pair.split('='));
  if (pairs.some((pair) => pair.length !== 2 || !pair[0])) throw new Error(`HOLDFAST_BENCH_VARIANT: bad NAME=value list in "${raw}"`);
  return { label: raw.slice(0, colon), env: Object.fromEntries(pairs) };
})();
if (!(sizeMiB > 0) || !(repeats >= 1)) throw new Error('HOLDFAST_BENCH_SIZE_MB and HOLDFAST_BENCH_REPEATS must be positive numbers');
const unknown = parts.filter((part) => !ALL_PARTS.includes(part));
if (unknown.length > 0) throw new Error(`HOLDFAST_BENCH_TABLE_PARTS: unknown part(s) ${unknown.join(', ')}; use ${ALL_PARTS.join(', ')}`);

const log = (message) => process.stderr.write(`[table] ${new Date().toISOString().slice(11, 19)} ${message}\n`);
const loadAverage = async () => Number((await readFile('/proc/loadavg', 'utf8')).split(' ')[0]);
const ZSTD = 'zstd -3 -T0 -q -c';
// One system key for every child of this run, so a restore child opens the data directory its backup child wrote.
const systemKey = randomBytes(32).toString('hex');

/**
 * The measured units of one source and the table rows built from them. A ZSTD source has a Holdfast backup, its
 * pipeline, the encrypted backup, and the three restores; PostgreSQL adds GZIP (Holdfast, pigz -3, gzip -3, restores).
 */
function sourceUnits({ id, title, source, goal, work, gzip }) {
  const units = [];
  const rows = [];
  const kept = new Map();
  const backup = (unitId, job) =>
    units.push({
      id: unitId,
      run: async () => {
        const runDir = join(work, `run-${randomBytes(4).toString('hex')}`);
        // The data directory private from the start, as the server wants it (it would change the mode and warn).
        await mkdir(join(runDir, 'dest'), { recursive: true });
        await mkdir(join(runDir, 'data'), { mode: 0o700 });
        const result = await holdfastRun({ systemKey, mode: 'backup', ...source.backupSpec, dataDir: join(runDir, 'data'), destinations: [join(runDir, 'dest')], ...job }, server);
        // The first backup of each unit stays for its restore rows; the others go at once.
        if (!kept.has(unitId)) kept.set(unitId, { runDir, ...result });
        else await rm(runDir, { recursive: true, force: true });
        return result;
      },
    });
  const restore = (unitId, backupId) =>
    units.push({
      id: unitId,
      run: async () => {
        const backupRun = kept.get(backupId);
        if (!backupRun) throw new Error(`no backup of ${backupId} to restore`);
        const target = source.restoreTarget();
        await target.prepare?.();
        try {
          const { kind, ...where } = target.spec;
          return await holdfastRun({ systemKey, mode: 'restore', kind, dataDir: join(backupRun.runDir, 'data'), storageId: backupRun.storageId, file: backupRun.path, ...where }, server);
        } finally {
          await target.cleanup();
        }
      },
    });
  const pipeline = (unitId, compressor, file) =>
    units.push({
      id: unitId,
      run: async () => {
        const result = await shellRun(source.pipeline(compressor, file));
        return { ...result, bytes: (await stat(file)).size };
      },
    });
  const pipelineRestore = (unitId, codec, file) =>
    units.push({
      id: unitId,
      run: async () => {
        const target = source.restoreTarget();
        try {
          return await shellRun(source.restorePipeline(codec, file, target.target));
        } finally {
          await target.cleanup();
        }
      },
    });
  const zstdFile = join(work, `${id}.zst`);
  backup(`${id} backup`, { compression: 'ZSTD' });
  pipeline(`${id} pipeline`, ZSTD, zstdFile);
  rows.push({ name: `${title}, ZSTD`, holdfast: `${id} backup`, against: `${id} pipeline`, againstText: source.pipelineText(ZSTD), goal });
  if (withHashed) {
    // The like-for-like pipeline: the same output, and SHA-256 + MD5 of it (SPEC's checksums) computed as it is written.
    const [sha, md5] = [join(work, `${id}.sha.fifo`), join(work, `${id}.md5.fifo`)];
    units.push({
      id: `${id} pipeline hashed`,
      run: async () => {
        const file = join(work, `${id}.hashed.zst`);
        const script = `rm -f '${sha}' '${md5}'; mkfifo '${sha}' '${md5}'; openssl dgst -sha256 < '${sha}' > /dev/null & openssl dgst -md5 < '${md5}' > /dev/null & ${source.pipeline(`${ZSTD} | tee '${sha}' '${md5}'`, file)}; wait; rm -f '${sha}' '${md5}'`;
        const result = await shellRun(script);
        return { ...result, bytes: (await stat(file)).size };
      },
    });
    rows.push({ name: `${title}, ZSTD, like-for-like (pipeline + SHA-256 + MD5 of its output)`, holdfast: `${id} backup`, against: `${id} pipeline hashed`, againstText: `${source.pipelineText(ZSTD).replace(/ > f$/, '')} | tee P1 P2 > f, openssl dgst -sha256 < P1, openssl dgst -md5 < P2`, goal: null });
  }
  if (variant) {
    backup(`${id} backup ${variant.label}`, { compression: 'ZSTD', env: variant.env });
    rows.push({ name: `${title}, ZSTD, ${variant.label}`, holdfast: `${id} backup ${variant.label}`, against: `${id} pipeline`, againstText: source.pipelineText(ZSTD), goal: null });
  }
  if (withInProcess) {
    backup(`${id} backup in-process`, { compression: 'ZSTD', env: IN_PROCESS_ENV });
    rows.push({ name: `${title}, ZSTD, in-process codec`, holdfast: `${id} backup in-process`, against: `${id} pipeline`, againstText: source.pipelineText(ZSTD), goal: null });
  }
  if (withEncrypted) {
    backup(`${id} backup encrypted`, { compression: 'ZSTD', encrypt: true });
    rows.push({ name: `${title}, ZSTD: encrypted / plain`, holdfast: `${id} backup encrypted`, against: `${id} backup`, againstText: 'Holdfast plain', goal: 1.05, encrypted: true });
  }
  if (gzip) {
    const gzipFile = join(work, `${id}.gz`);
    backup(`${id} gzip backup`, { compression: 'GZIP' });
    pipeline(`${id} pigz`, 'pigz -3', join(work, `${id}.pigz.gz`));
    pipeline(`${id} gzip`, 'gzip -3', gzipFile);
    if (withInProcess) {
      backup(`${id} gzip backup in-process`, { compression: 'GZIP', env: IN_PROCESS_ENV });
      rows.push({ name: `${title}, GZIP, in-process codec`, holdfast: `${id} gzip backup in-process`, against: `${id} pigz`, againstText: source.pipelineText('pigz -3'), goal: null });
    }
    rows.push({ name: `${title}, GZIP`, holdfast: `${id} gzip backup`, against: `${id} pigz`, againstText: source.pipelineText('pigz -3'), goal: 1.15 });
    rows.push({ name: `${title}, GZIP (single-threaded gzip)`, holdfast: `${id} gzip backup`, against: `${id} gzip`, againstText: source.pipelineText('gzip -3'), goal: null });
    if (withRestore) {
      restore(`${id} gzip restore`, `${id} gzip backup`);
      pipelineRestore(`${id} gzip pipeline restore`, 'GZIP', gzipFile);
      rows.push({ name: `${title}, GZIP, restore`, holdfast: `${id} gzip restore`, against: `${id} gzip pipeline restore`, againstText: source.restorePipelineText('GZIP'), goal: 1.15 });
    }
  }
  if (withRestore) {
    restore(`${id} restore`, `${id} backup`);
    pipelineRestore(`${id} pipeline restore`, 'ZSTD', zstdFile);
    rows.push({ name: `${title}, ZSTD, restore`, holdfast: `${id} restore`, against: `${id} pipeline restore`, againstText: source.restorePipelineText('ZSTD'), goal: 1.15 });
    if (withEncrypted) {
      restore(`${id} restore encrypted`, `${id} backup encrypted`);
      rows.push({ name: `${title}, ZSTD, restore: encrypted / plain`, holdfast: `${id} restore encrypted`, against: `${id} restore`, againstText: 'Holdfast plain restore', goal: 1.05, encrypted: true });
    }
  }
  return { units, rows, cleanup: () => Promise.all([...kept.values()].map((backupRun) => rm(backupRun.runDir, { recursive: true, force: true }))) };
}

/** Runs the units `repeats` times in alternation; a unit that fails is skipped from then on, with its error. */
async function runRounds(units, results, skipped) {
  for (let round = 0; round < repeats; round++) {
    for (const unit of units) {
      if (skipped.has(unit.id)) continue;
      const load = await loadAverage();
      try {
        const result = await unit.run(round);
        results.set(unit.id, [...(results.get(unit.id) ?? []), { ...result, load }]);
        log(`round ${round + 1}/${repeats} ${unit.id}: ${result.seconds.toFixed(2)} s, CPU ${result.cpuSeconds.toFixed(2)} s${result.peakRssKiB ? `, peak RSS ${(result.peakRssKiB / 1024).toFixed(0)} MiB` : ''} (load ${load.toFixed(1)})`);
      } catch (error) {
        log(`round ${round + 1}/${repeats} ${unit.id}: FAILED ${error.message}`);
        skipped.set(unit.id, `failed: ${String(error.message).split('\n')[0].slice(0, 200)}`);
      }
    }
  }
}

/** The first line of `command --version` (or why it is missing), for the record of what was compared. */
const version = (command, args = ['--version']) =>
  run(command, args).then(
    ({ stdout, stderr }) => (stdout || stderr).trim().split('\n')[0],
    () => 'not installed',
  );

const work = await mkdtemp(join(tmpdir(), 'holdfast-table-bench-'));
let server;
if (oneChild) {
  await mkdir(join(work, 'server-data'), { mode: 0o700 });
  server = await startHoldfastServer({ dataDir: join(work, 'server-data'), systemKey });
}
const startedAt = new Date();
const report = { startedAt: startedAt.toISOString(), quick, sizeMiB, repeats, node: process.version, loadAtStart: await loadAverage(), parts: {} };
const results = new Map();
const skipped = new Map();
const figures = [];
const bytes = sizeMiB * 1024 * 1024;
const SOURCES = {
  postgres: () => ({ title: 'PostgreSQL', source: postgresSource(bytes), goal: 1.15, gzip: true }),
  mariadb: () => ({ title: 'MariaDB', source: mariadbSource(bytes), goal: 1.15 }),
  directory: () => ({ title: 'directory of 8 MiB files', source: folderSource(work, 'directory', { generate: (dir) => generateDirectory(dir, bytes) }), goal: 1.15 }),
  files: () => ({ title: 'small files (generated 0-24 KiB tree)', source: folderSource(work, 'files', { generate: (dir) => generateSmallFiles(dir, Math.round(bytes / 2)) }), goal: 1.5 }),
  node_modules: () => ({ title: `small files (node_modules${nodeModules.endsWith('/node_modules') ? '' : `/${nodeModules.split('/node_modules/').at(-1)}`}, in place)`, source: folderSource(work, 'node_modules', { inPlace: nodeModules }), goal: 1.5 }),
};
try {
  for (const id of parts) {
    const { title, source, goal, gzip } = SOURCES[id]();
    const set = sourceUnits({ id, title, source, goal, work, gzip });
    if (gzip && !existsSync('/usr/bin/pigz')) skipped.set(`${id} pigz`, 'pigz is not installed (/usr/bin/pigz; node tooling/test-services/pigz.mjs installs it)');
    if (id === 'node_modules' && !existsSync(nodeModules)) {
      for (const unit of set.units) skipped.set(unit.id, `${nodeModules} does not exist (npm ci first, or set HOLDFAST_BENCH_NODE_MODULES)`);
    }
    for (const [unitId, reason] of skipped) if (set.units.some((unit) => unit.id === unitId)) log(`${unitId}: skipped: ${reason}`);
    let sourceBytes = 0;
    try {
      if (!skipped.has(`${id} backup`)) {
        log(`${id}: preparing ${source.label}`);
        sourceBytes = await source.prepare().catch((error) => {
          // A source that cannot be set up (a server down, a tool missing) skips its rows, saying why; the others run.
          const reason = `its source could not be prepared: ${String(error.message).split('\n')[0].slice(0, 200)}`;
          log(`${id}: ${reason}`);
          for (const unit of set.units) skipped.set(unit.id, reason);
          return 0;
        });
        if (sourceBytes > 0) log(`${id}: source ${(sourceBytes / 1024 / 1024).toFixed(0)} MiB`);
        await runRounds(set.units, results, skipped);
      }
    } finally {
      await set.cleanup();
      await Promise.resolve(source.cleanup()).catch((error) => log(`${id}: cleanup failed: ${String(error.message).split('\n')[0]}`));
    }
    report.parts[id] = { source: source.label, sourceBytes, skipped: skipped.get(`${id} backup`) ?? null };
    figures.push(...set.rows.map((row) => ({ ...rowFigures(row, results, sourceBytes, skipped), part: id })));
  }
} finally {
  report.loadAtEnd = await loadAverage();
  await server?.close();
  await rm(work, { recursive: true, force: true });
}

const machine = `${cpus().length} cores (${cpus()[0]?.model.trim()}), ${(totalmem() / 1024 ** 3).toFixed(1)} GiB memory`;
const tools = await Promise.all([['pg_dump'], ['mariadb-dump'], ['zstd', ['-V']], ['pigz'], ['gzip'], ['tar']].map(([command, args]) => version(command, args)));
const sizes = Object.entries(report.parts).map(([id, part]) => `${id} ${part.skipped ? 'skipped' : `${(part.sourceBytes / 1024 / 1024).toFixed(0)} MiB`}`).join(', ');
const heading = `${startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC, \`${quick ? 'npm run bench:quick' : `HOLDFAST_BENCH_SIZE_MB=${sizeMiB} node tooling/bench/table.mjs`}\` (\`npm run bench\` runs it at 1 GiB), ${repeats} alternating run${repeats === 1 ? "" : "s"} per side, median (min-max) seconds; sources: ${sizes}; ${machine}; load average ${report.loadAtStart} at start, ${report.loadAtEnd} at end; Node ${process.version}`;
console.log(`\nbenchmark table (issue 42): ${heading}\n`);
console.log(plainTable(figures));
console.log(`\nCPU s/GiB: CPU seconds (user + system) per GiB of source; Holdfast: its process and the tools it ran (pg_dump, mariadb-dump, pg_restore, mariadb), the pipeline: all its processes.`);
console.log(`Tools: ${tools.join('; ')}`);
console.log('\n--- Markdown (docs/benchmarks.md, "Current figures") ---\n');
console.log(`Run: ${heading}.\n`);
console.log(markdownTable(figures));
console.log(`\nTools: ${tools.join('; ')}.`);
report.figures = figures;
report.tools = tools;
const resultsDir = join(here, 'results');
await mkdir(resultsDir, { recursive: true });
const file = join(resultsDir, `table-${report.startedAt.replace(/[:.]/g, '-')}.json`);
await writeFile(file, `${JSON.stringify(report, null, 2)}\n`);
console.log(`\nJSON: ${file}`);
