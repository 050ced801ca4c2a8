// Process and disk measurements for the benchmark.
import { spawn } from 'node:child_process';
import { SERVER_ENV, SERVER_NODE_FLAGS } from './server-node-flags.mjs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

const PG = { host: '127.0.0.1', user: process.env.PGUSER ?? 'root' };

/** Runs one SQL statement with psql and answers its trimmed output. */
export function psql(database, sql) {
  return run('psql', ['-h', PG.host, '-U', PG.user, '-d', database, '-XAtqc', sql]).then((result) => result.stdout.trim());
}

/** Runs a command; rejects with its stderr on a non-zero exit. */
export function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve({ stdout, stderr }) : reject(new Error(`${command} exited ${code}: ${stderr.slice(-2000)}`))));
  });
}

/** Wall time of a shell pipeline (the baselines). */
export async function timeShell(script) {
  const started = process.hrtime.bigint();
  await run('sh', ['-c', `set -e; ${script}`]);
  return Number(process.hrtime.bigint() - started) / 1e9;
}

/** Bytes under `path` (files only; a vanished entry counts 0). */
export async function bytesUnder(path) {
  let total = 0;
  let entries;
  try {
    entries = await readdir(path, { withFileTypes: true });
  } catch {
    return 0;
  }
  for (const entry of entries) {
    const full = join(path, entry.name);
    if (entry.isDirectory()) total += await bytesUnder(full);
    else total += await stat(full).then((s) => s.size, () => 0);
  }
  return total;
}

/**
 * Spawns `node script args` with TMPDIR set to `tmpDir`, samples the child's RSS and the size of `tmpDir` every
 * 250 ms, and answers the child's JSON line plus the sampled peaks.
 */
export async function measureNode(script, args, tmpDir) {
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, script, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...SERVER_ENV, TMPDIR: tmpDir } });
  let stdout = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  let peakRssKiB = 0;
  let peakTmpBytes = 0;
  const sample = async () => {
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8').catch(() => '');
    peakRssKiB = Math.max(peakRssKiB, Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0));
    peakTmpBytes = Math.max(peakTmpBytes, await bytesUnder(tmpDir));
  };
  const timer = setInterval(() => void sample(), 250);
  const code = await new Promise((resolve) => child.on('close', resolve));
  clearInterval(timer);
  await sample();
  if (code !== 0) throw new Error(`${script} exited ${code}`);
  const result = JSON.parse(stdout.trim().split('\n').at(-1));
  return { ...result, sampledPeakRssKiB: peakRssKiB, peakTmpBytes, finalTmpBytes: await bytesUnder(tmpDir) };
}
