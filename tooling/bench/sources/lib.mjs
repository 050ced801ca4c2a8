// Shared parts of the source benchmarks (`node tooling/bench/sources/<engine>.mjs`; not part of `npm test`): the
// baseline pipeline and the adapter's dump run in the same invocation, on the same data, and are compared.
import 'reflect-metadata';
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { createGzip } from 'node:zlib';
import { container } from 'tsyringe';
import { instantiateAdapter } from '@holdfast/sdk';

export const mib = (bytes) => bytes / 1024 / 1024;
export const log = (message) => process.stderr.write(`[bench] ${message}\n`);

/** Benchmark size in MiB (HOLDFAST_BENCH_SIZE_MB, default 200). */
export function sizeMiB() {
  const value = Number(process.env.HOLDFAST_BENCH_SIZE_MB ?? 200);
  if (!Number.isFinite(value) || value <= 0) throw new Error('HOLDFAST_BENCH_SIZE_MB must be a positive number');
  return value;
}

/** Runs a shell script under GNU time: wall seconds and the peak RSS (KiB) of its largest process. */
export function timeShell(script) {
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn('/usr/bin/time', ['-f', 'HFRSS %M', 'sh', '-c', `set -e; ${script}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      if (code !== 0) return reject(new Error(`baseline exited ${code}: ${stderr.slice(-1000)}`));
      resolve({ seconds, peakRssKiB: Number(/HFRSS (\d+)/.exec(stderr)?.[1] ?? 0) });
    });
  });
}

/** Runs a command and resolves its stdout; rejects on a non-zero exit. */
export function run(command, args, input) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${command} exited ${code}: ${stderr.slice(-1000)}`))));
    child.stdin.end(input);
  });
}

/** RSS in KiB of every live descendant of this process (the adapter's tools: mariadb-dump, redis-cli, ...), from /proc. */
async function childrenRssKiB() {
  const parents = new Map();
  const rss = new Map();
  for (const entry of await readdir('/proc').catch(() => [])) {
    if (!/^\d+$/.test(entry)) continue;
    const status = await readFile(`/proc/${entry}/status`, 'utf8').catch(() => '');
    const ppid = Number(/PPid:\s+(\d+)/.exec(status)?.[1] ?? 0);
    parents.set(Number(entry), ppid);
    rss.set(Number(entry), Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0));
  }
  let total = 0;
  for (const [pid, kib] of rss) {
    for (let up = parents.get(pid); up; up = parents.get(up)) {
      if (up === process.pid) {
        total += kib;
        break;
      }
    }
  }
  return total;
}

/**
 * The adapter's dump, gzip-compressed (node zlib, level 6 like gzip's default) into `outFile`. Samples the RSS of
 * this process plus its child tools (summed, through /proc) every 100 ms: peakRssKiB is the peak of that sum, so
 * a tool the adapter spawns counts against it (the baseline's GNU time figure is its largest single process).
 */
export async function timeAdapter(definition, config, dumpOptions, outFile) {
  const source = instantiateAdapter(container, definition, config);
  const baselineRss = process.memoryUsage.rss();
  let peakRss = baselineRss;
  let peakTotalKiB = Math.round(baselineRss / 1024);
  let sampling = false;
  const timer = setInterval(() => {
    const own = process.memoryUsage.rss();
    peakRss = Math.max(peakRss, own);
    if (sampling) return;
    sampling = true;
    void childrenRssKiB()
      .then((children) => (peakTotalKiB = Math.max(peakTotalKiB, Math.round(own / 1024) + children)))
      .finally(() => (sampling = false));
  }, 100);
  const started = process.hrtime.bigint();
  try {
    const handle = await source.dump({ databases: [], ...dumpOptions, signal: new AbortController().signal });
    await pipeline(handle.stream, createGzip(), createWriteStream(outFile));
    const stats = await handle.done;
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    return {
      seconds,
      dumpBytes: stats.bytes,
      gzipBytes: (await stat(outFile)).size,
      peakRssKiB: peakTotalKiB,
      nodePeakRssKiB: Math.round(peakRss / 1024),
      // What the dump itself added: RSS before it started can hold the seeding's leftovers (Redis's pipelines).
      rssGrowthKiB: peakTotalKiB - Math.round(baselineRss / 1024),
    };
  } finally {
    clearInterval(timer);
  }
}

/** Prints the comparison table and the JSON line. Throughput is dump bytes (uncompressed) per second. */
export function report(engine, dumpBytes, baseline, adapter, extra = {}) {
  const baselineMiBs = mib(dumpBytes.baseline) / baseline.seconds;
  const adapterMiBs = mib(dumpBytes.adapter) / adapter.seconds;
  const rows = [
    ['', 'seconds', 'dump MiB', 'MiB/s', 'peak RSS MiB'],
    [baseline.label, baseline.seconds.toFixed(2), mib(dumpBytes.baseline).toFixed(1), baselineMiBs.toFixed(1), (baseline.peakRssKiB / 1024).toFixed(1)],
    [adapter.label, adapter.seconds.toFixed(2), mib(dumpBytes.adapter).toFixed(1), adapterMiBs.toFixed(1), (adapter.peakRssKiB / 1024).toFixed(1)],
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => String(row[i]).length)));
  for (const row of rows) process.stdout.write(`${row.map((cell, i) => String(cell).padEnd(widths[i])).join('  ')}\n`);
  const ratio = adapterMiBs / baselineMiBs;
  process.stdout.write(`${engine}: ratio (adapter / baseline throughput) = ${ratio.toFixed(2)}\n`);
  process.stdout.write(`${JSON.stringify({ engine, baselineMiBs, adapterMiBs, ratio, baseline, adapter, ...extra })}\n`);
}
