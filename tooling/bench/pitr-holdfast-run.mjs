// Child process of the PITR benchmark (pitr.mjs): ONE Holdfast run against the PITR test cluster, in-process like
// holdfast-run.mjs (the same stack, node flags and heap settings), printing JSON lines on stdout. Usage:
//   node pitr-holdfast-run.mjs '<json spec>'
// spec: { mode, dataDir, systemKey, cluster: { host, port, user, password }, destination, compression?, flushSeconds? }
//   mode 'backup':  a disabled job (no stream) run once: a physical base backup, or with `database` a logical dump of
//                   it; answers wall time, CPU, output size and peak RSS of the run.
//   mode 'setup':   an enabled physical job: waits until it streams, takes a base backup, waits until the archived
//                   WAL covers the moment the backup ended, then disables the job (the slot stays; the caller drops it).
//   mode 'restore': restores that job (`jobId`) to the latest archived WAL into `targetPath`; answers its figures.
//   mode 'stream':  an enabled physical job without a base backup; prints {"ready":…} once it streams, resets the
//                   peak RSS (VmHWM) and streams until a line "stop" arrives on stdin, then answers the peak RSS and
//                   CPU of the streaming time and what was archived.
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { applyServerHeapSettings } from '../../apps/server/dist/heap-settings.js';
import { applyYoungCollections } from '../../apps/server/dist/young-collections.js';
import { startHoldfast } from './lib/holdfast-stack.mjs';

const heapGrowth = applyServerHeapSettings(process.env);
const spec = JSON.parse(process.argv[2] ?? '{}');
if (!['backup', 'setup', 'restore', 'stream'].includes(spec.mode) || !spec.dataDir) {
  console.error("usage: pitr-holdfast-run.mjs '{\"mode\":\"backup\"|\"setup\"|\"restore\"|\"stream\",\"dataDir\":...}'");
  process.exit(2);
}

const statusField = (name, status = readFileSync('/proc/self/status', 'utf8')) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
/** CPU seconds of this process and of the children it waited for (pg_basebackup, pg_receivewal, runuser/pg_ctl). */
function cpuNow() {
  const fields = readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ');
  const ticks = 100; // getconf CLK_TCK on Linux
  return { self: (Number(fields[11]) + Number(fields[12])) / ticks, children: (Number(fields[13]) + Number(fields[14])) / ticks };
}
// The process's RSS sampled every 100 ms (the peak between resets), to cross-check VmHWM, and the peaks of what V8
// and Node hold (heap, buffers), to tell what a high RSS is made of.
let sampledPeakKiB = 0;
let memoryPeak = {};
const sampler = setInterval(() => {
  const status = readFileSync('/proc/self/status', 'utf8');
  sampledPeakKiB = Math.max(sampledPeakKiB, statusField('VmRSS', status));
  const usage = process.memoryUsage();
  for (const field of ['heapTotal', 'heapUsed', 'external', 'arrayBuffers']) memoryPeak[field] = Math.max(memoryPeak[field] ?? 0, usage[field]);
  memoryPeak.rssAnonKiB = Math.max(memoryPeak.rssAnonKiB ?? 0, statusField('RssAnon', status));
  memoryPeak.rssFileKiB = Math.max(memoryPeak.rssFileKiB ?? 0, statusField('RssFile', status));
}, 100);
const out = (value) => process.stdout.write(`${JSON.stringify(value)}\n`);

// A new job is picked up by the next supervisor pass: every 2 s here for the setup (15 s in production, kept for
// the streaming measurement).
const holdfast = await startHoldfast({ dataDir: spec.dataDir, systemKey: spec.systemKey, ...(spec.mode === 'setup' ? { pointInTime: { reloadIntervalMs: 2_000 } } : {}) });
heapGrowth.markIdle();
applyYoungCollections(process.env);
const data = (answer) => answer?.data ?? answer;
const OUTCOME_EVENTS = ['backup_success', 'backup_partial', 'backup_failure', 'restore_complete', 'restore_failure'];

/** The execution once it ended: woken by its outcome event, the status read every 500 ms in case none comes. */
async function waitFor(executionId) {
  let wake = () => undefined;
  const offs = OUTCOME_EVENTS.map((name) => holdfast.events.on(name, (payload) => payload.executionId === executionId && wake()));
  try {
    for (;;) {
      const execution = data(await holdfast.call('GET', `/api/executions/${executionId}`));
      if (!['Pending', 'Running'].includes(execution.status)) return data(await holdfast.call('GET', `/api/executions/${executionId}?includeLogs=true`));
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, 500);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    for (const off of offs) off();
  }
}

async function until(what, check, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Source (physical, or logical of `database`), one local destination and a job; answers the job. */
async function createJob({ enabled, database }) {
  const { host, port, user, password } = spec.cluster;
  const config = database ? { host, port, user, password, sslMode: 'disable' } : { mode: 'physical', host, port, user, password, sslMode: 'disable', walFlushIntervalSeconds: spec.flushSeconds ?? 10 };
  const source = data(await holdfast.call('POST', '/api/adapters', { name: database ? 'bench pitr logical' : 'bench pitr physical', type: 'database', adapterId: 'postgres', config }));
  const storage = data(await holdfast.call('POST', '/api/adapters', { name: 'bench pitr local', type: 'storage', adapterId: 'local', config: { path: spec.destination } }));
  return data(
    await holdfast.call('POST', '/api/jobs', {
      name: database ? 'bench pitr logical' : 'bench pitr physical',
      schedule: '0 0 1 1 *',
      enabled,
      sourceId: source.id,
      databases: database ? [database] : [],
      compression: spec.compression ?? 'ZSTD',
      encryptionProfileId: null,
      skipVerification: true,
      destinations: [{ configId: storage.id, priority: 0 }],
    }),
  );
}

const pointInTime = async (jobId) => data(await holdfast.call('GET', `/api/jobs/${jobId}/point-in-time`));
const isStreaming = async (jobId) => (await pointInTime(jobId)).streaming?.state === 'streaming';

/** Runs `trigger` and answers the ended execution with the run's wall time, CPU and peak RSS. */
async function measured(trigger) {
  await writeFile('/proc/self/clear_refs', '5').catch(() => undefined); // VmHWM from here on
  sampledPeakKiB = 0;
  memoryPeak = {};
  const started = process.hrtime.bigint();
  const cpuBefore = cpuNow();
  const execution = await waitFor(await trigger());
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const cpuAfter = cpuNow();
  const errors = (execution.logs ?? []).filter((entry) => entry.level === 'error').map((entry) => entry.message);
  return {
    status: execution.status,
    seconds,
    cpuSeconds: cpuAfter.self - cpuBefore.self,
    childCpuSeconds: cpuAfter.children - cpuBefore.children,
    size: execution.size,
    path: execution.path,
    peakRssKiB: statusField('VmHWM'),
    sampledPeakRssKiB: sampledPeakKiB,
    memoryPeak,
    errors,
    logTail: execution.status === 'Success' ? undefined : (execution.logs ?? []).slice(-12).map((entry) => `${entry.level}: ${entry.message}`),
  };
}

try {
  if (spec.mode === 'backup') {
    const job = await createJob({ enabled: false, database: spec.database });
    const result = await measured(async () => data(await holdfast.call('POST', `/api/jobs/${job.id}/run`)).executionId);
    out({ ...result, jobId: job.id });
  } else if (spec.mode === 'setup') {
    const job = await createJob({ enabled: true });
    out({ jobId: job.id }); // early, so the caller can drop the slot even if the rest fails
    await until('the WAL stream', () => isStreaming(job.id), 120_000);
    const base = await measured(async () => data(await holdfast.call('POST', `/api/jobs/${job.id}/run`)).executionId);
    if (base.status !== 'Success') throw new Error(`base backup ended ${base.status}: ${base.errors.join('; ')}`);
    const baseEnded = Date.now();
    const window = await until('a window past the base backup', async () => {
      const found = (await pointInTime(job.id)).window;
      return found && Date.parse(found.end) >= baseEnded ? found : undefined;
    }, 120_000);
    await holdfast.call('PUT', `/api/jobs/${job.id}`, { enabled: false });
    await until('the stream to stop', async () => !(await isStreaming(job.id)), 60_000);
    out({ status: 'Success', jobId: job.id, base, window });
  } else if (spec.mode === 'restore') {
    const result = await measured(async () => data(await holdfast.call('POST', `/api/jobs/${spec.jobId}/point-in-time/restore`, { target: { type: 'latest' }, targetPath: spec.targetPath })).executionId);
    out(result);
  } else {
    const job = await createJob({ enabled: true });
    await until('the WAL stream', () => isStreaming(job.id), 120_000);
    const startupPeakKiB = statusField('VmHWM');
    await writeFile('/proc/self/clear_refs', '5').catch(() => undefined);
    sampledPeakKiB = 0;
    memoryPeak = {};
    const cpuBefore = cpuNow();
    const started = process.hrtime.bigint();
    out({ ready: true, jobId: job.id, rssKiB: statusField('VmRSS') });
    const lines = createInterface({ input: process.stdin });
    for await (const line of lines) if (line.trim() === 'stop') break;
    // An open stdin pipe keeps the process alive after the stack closed.
    process.stdin.destroy();
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    const cpuAfter = cpuNow();
    const archive = await pointInTime(job.id);
    out({
      status: archive.streaming?.state === 'streaming' ? 'Success' : `stream ${archive.streaming?.state}: ${archive.streaming?.lastError ?? ''}`,
      jobId: job.id,
      seconds,
      cpuSeconds: cpuAfter.self - cpuBefore.self,
      childCpuSeconds: cpuAfter.children - cpuBefore.children,
      peakRssKiB: statusField('VmHWM'),
      sampledPeakRssKiB: sampledPeakKiB,
      startupPeakRssKiB: startupPeakKiB,
      endRssKiB: statusField('VmRSS'),
      memory: process.memoryUsage(),
      memoryPeak,
      segments: archive.segments,
      storedBytes: archive.storedBytes,
    });
  }
} finally {
  clearInterval(sampler);
  await holdfast.close();
}
