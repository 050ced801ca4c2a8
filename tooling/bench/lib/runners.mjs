// The two kinds of measured run of the benchmark table (table.mjs): one Holdfast backup or restore in a child process
// of its own (holdfast-run.mjs), and one shell pipeline with the CPU seconds of all its processes.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { childrenCpuSeconds } from './children-cpu.mjs';
import { SERVER_ENV, SERVER_NODE_FLAGS } from './server-node-flags.mjs';

const benchDir = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Runs `sh -c 'set -e; <script>'` and answers its wall seconds and CPU seconds (user + system of the shell and every
 * process of the pipeline, as `/usr/bin/time` counts them). The caller runs one measured child at a time: the CPU is
 * the difference of this process's waited-for children before and after, so a second child at once would count too.
 */
export function shellRun(script) {
  return new Promise((resolve, reject) => {
    const before = childrenCpuSeconds();
    const started = process.hrtime.bigint();
    const child = spawn('sh', ['-c', `set -e; ${script}`], { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr = (stderr + chunk).slice(-4000)));
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      const after = childrenCpuSeconds();
      if (code !== 0) return reject(new Error(`pipeline exited ${code}: ${script}\n${stderr}`));
      resolve({ seconds, cpuSeconds: after.user - before.user + (after.system - before.system) });
    });
  });
}

/** The figures of one holdfast-run.mjs answer line; throws unless the run ended Success. */
function figuresOf(spec, line) {
  const result = JSON.parse(line);
  if (result.status !== 'Success') throw new Error(`Holdfast ${spec.mode} ended ${result.status}: ${(result.errors ?? []).join('; ')}`);
  const cpu = result.cpuSeconds;
  return {
    seconds: result.seconds,
    cpuSeconds: cpu.user + cpu.system + (cpu.childrenUser ?? 0) + (cpu.childrenSystem ?? 0),
    bytes: result.size,
    peakRssKiB: result.peakRssKiB,
    storageId: result.storageId,
    path: result.path,
  };
}

/**
 * Runs holdfast-run.mjs with `spec` in its own process (the server's node flags and allocator settings); answers its
 * figures: wall and CPU seconds (the process and the tools it ran), output size, peak RSS (VmHWM) and the result's
 * storage id and path. Rejects unless the run ended Success. `spec.env` is added to the child's environment.
 * With `server` (startHoldfastServer), the run goes to that long-lived child instead.
 */
export function holdfastRun({ env = {}, ...spec }, server) {
  if (server) return server.run({ ...spec, env });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, join(benchDir, 'holdfast-run.mjs'), JSON.stringify(spec)], {
      stdio: ['ignore', 'pipe', 'inherit'],
      // `env`: variables of this run only (HOLDFAST_EXTERNAL_COMPRESSOR=off for the in-process rows).
      env: { ...process.env, ...SERVER_ENV, ...env },
    });
    let stdout = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      const line = stdout.trim().split('\n').at(-1);
      if (code !== 0 || !line) return reject(new Error(`holdfast-run.mjs (${spec.mode} ${spec.kind ?? ''}) exited ${code}`));
      try {
        resolve(figuresOf(spec, line));
      } catch (error) {
        reject(error);
      }
    });
  });
}

/**
 * One long-lived holdfast-run.mjs --serve child (one stack on `dataDir`) for many runs, one at a time: what
 * `npm run bench:quick` uses, since starting a stack per run was most of its time. Figures as holdfastRun's; the peak
 * RSS is reset before each run. `close()` ends the child.
 */
export async function startHoldfastServer({ dataDir, systemKey }) {
  const child = spawn(process.execPath, [...SERVER_NODE_FLAGS, join(benchDir, 'holdfast-run.mjs'), '--serve', JSON.stringify({ dataDir, systemKey })], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...SERVER_ENV },
  });
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  let exit = null;
  child.on('close', (code) => (exit = code));
  let queue = Promise.resolve();
  return {
    run(spec) {
      const answer = queue.then(async () => {
        if (exit !== null) throw new Error(`the holdfast-run.mjs server exited ${exit}`);
        child.stdin.write(`${JSON.stringify(spec)}\n`);
        const { value, done } = await lines.next();
        if (done) throw new Error(`the holdfast-run.mjs server ended during a ${spec.mode} (exit ${exit})`);
        return figuresOf(spec, value);
      });
      queue = answer.catch(() => undefined);
      return answer;
    },
    async close() {
      child.stdin.end();
      if (exit === null) await new Promise((resolve) => child.on('close', resolve));
    },
  };
}
