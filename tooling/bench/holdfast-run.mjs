// Child process of the pipeline benchmark (pipeline.mjs): runs ONE Holdfast backup or ONE restore in-process and
// prints a JSON line with its wall time, output size and this process's peak RSS (VmHWM) and how it splits
// (V8 heap, external/array buffers), so backup and restore memory are measured separately. Usage:
//   node holdfast-run.mjs '<json spec>'
// spec: { mode: 'backup', kind: 'postgres'|'directory'|'mysql', target, destinations: [dir...], dataDir, compression,
//         compressionLevel?, compressionThreads?, pgCompression?, encrypt? (true: a symmetric profile; 'age': a
//         public-key profile, issue 45), skipVerification? (default true),
//         archiveFormat? ('PLAIN' | 'SEEKABLE'), fullEveryRuns?, fullEveryDays? }   (absent fields: the API's defaults)
//       { mode: 'restore', kind?, dataDir, storageId, file, database? | targetPath?, paths? }   (a dataDir a backup
//         child left; kind 'mysql' loads the MySQL source, which the other kinds leave out)
// kind 'mysql' backs up the MariaDB on 127.0.0.1:3306 as root without a password (the test server).
// cpuSeconds counts this process (every thread) and, apart, the children it waited for during the run (pg_dump,
// pg_restore, mariadb-dump, mariadb, ...), so a row's CPU compares with a shell pipeline's sum of its processes.
// Both take `systemKey` (64 hex): a restore child must start with the key its backup child used, and optionally
// `memorySampleMs`: the answer then carries `memorySamples`, [ms since the trigger, RSS KiB, anonymous RSS KiB,
// file-backed RSS KiB, threads, heapTotal, heapUsed, external, arrayBuffers] every that many ms, to see when during
// a run the memory grows and what holds it.
// Serve mode (`node holdfast-run.mjs --serve '{"dataDir":...,"systemKey":...}'`, what `npm run bench:quick` uses): ONE
// stack for many runs, one spec per stdin line, one answer line per run on stdout (the same JSON). Starting a stack
// per run was most of bench:quick's minutes. Per run: VmHWM is reset (/proc/self/clear_refs 5) before the trigger so
// the peak RSS is that run's; CPU counts from the trigger as above; `spec.env` is set for the run and restored after
// (HOLDFAST_EXTERNAL_COMPRESSOR=off rows); a spec's dataDir is ignored (the stack's serves every run).
import { readFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { applyServerHeapSettings } from '../../apps/server/dist/heap-settings.js';
import { applyYoungCollections } from '../../apps/server/dist/young-collections.js';
import { generateAgeIdentity } from '../../kernel/dist/index.js';
import { childrenCpuSeconds } from './lib/children-cpu.mjs';
import { startHoldfast } from './lib/holdfast-stack.mjs';

// The V8 heap growth the server process sets at startup (HOLDFAST_HEAP_GROWING_PERCENT), so figures match a server's.
const heapGrowth = applyServerHeapSettings(process.env);

const serve = process.argv[2] === '--serve';
const firstSpec = JSON.parse(process.argv[serve ? 3 : 2] ?? '{}');
if ((!serve && !['backup', 'restore'].includes(firstSpec.mode)) || !firstSpec.dataDir) {
  console.error("usage: holdfast-run.mjs '{\"mode\":\"backup\"|\"restore\",\"dataDir\":...}' | --serve '{\"dataDir\":...}'");
  process.exit(2);
}

// V8 heap, buffers and RSS sampled while the run goes (the peak of each, not the end state).
const memoryPeak = { heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0, rss: 0 };
const sampler = setInterval(() => {
  const usage = process.memoryUsage();
  memoryPeak.heapTotal = Math.max(memoryPeak.heapTotal, usage.heapTotal);
  memoryPeak.heapUsed = Math.max(memoryPeak.heapUsed, usage.heapUsed);
  memoryPeak.external = Math.max(memoryPeak.external, usage.external);
  memoryPeak.arrayBuffers = Math.max(memoryPeak.arrayBuffers, usage.arrayBuffers);
  memoryPeak.rss = Math.max(memoryPeak.rss, usage.rss);
}, 100);
// The optional timeline starts with the run (`timelineStart` is set when the backup or restore is triggered).
let memorySamples = [];
let timelineStart = null;
const timeline =
  firstSpec.memorySampleMs > 0
    ? setInterval(() => {
        if (timelineStart === null) return;
        const usage = process.memoryUsage();
        const ms = Math.round(Number(process.hrtime.bigint() - timelineStart) / 1e6);
        const status = readFileSync('/proc/self/status', 'utf8');
        const field = (name) => Number(new RegExp(`${name}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
        memorySamples.push([ms, Math.round(usage.rss / 1024), field('RssAnon'), field('RssFile'), field('Threads'), usage.heapTotal, usage.heapUsed, usage.external, usage.arrayBuffers]);
      }, firstSpec.memorySampleMs)
    : null;

// A serving stack loads the MySQL source too: any run may need it.
const holdfast = await startHoldfast({ dataDir: firstSpec.dataDir, systemKey: firstSpec.systemKey, extraAdapters: serve || firstSpec.kind === 'mysql' ? ['@holdfast/source-mysql'] : [] });
heapGrowth.markIdle();
// The young collections the server paces once started (HOLDFAST_YOUNG_COLLECTIONS).
applyYoungCollections(process.env);
const data = (answer) => answer?.data ?? answer;
let baselineRssKiB = Number(/VmRSS:\s+(\d+)/.exec(await readFile('/proc/self/status', 'utf8'))?.[1] ?? 0);
// What the idle stack holds before the run (V8 heap, buffers), to tell the fixed cost from the pipeline's.
let baselineMemory = process.memoryUsage();

// The engine's outcome events (one per finished backup or restore, emitted after its row is written).
const OUTCOME_EVENTS = ['backup_success', 'backup_partial', 'backup_failure', 'restore_complete', 'restore_failure'];
// How often the status is read when no event arrives (a cancelled run raises none).
const STATUS_READ_MS = 1000;

// Waits for the run's outcome event and reads the status once it came (and every STATUS_READ_MS in case none does);
// the logs are read once, at the end. Polling the status every 50 ms was an HTTP client and an HTTP server in this
// very process, about 20 requests a second, CPU the shell baselines do not spend and a real run does not either.
async function waitFor(executionId) {
  let finished = false;
  let wake = () => undefined;
  const unsubscribe = OUTCOME_EVENTS.map((name) =>
    holdfast.events.on(name, (payload) => {
      if (payload.executionId !== executionId) return;
      finished = true;
      wake();
    }),
  );
  try {
    for (;;) {
      const execution = data(await holdfast.call('GET', `/api/executions/${executionId}`));
      if (!['Pending', 'Running'].includes(execution.status)) return data(await holdfast.call('GET', `/api/executions/${executionId}?includeLogs=true`));
      await new Promise((resolve) => {
        // After the event (it may have come while the status was being read) the next read is the last one.
        const timer = setTimeout(resolve, finished ? 20 : STATUS_READ_MS);
        wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
  } finally {
    for (const off of unsubscribe) off();
  }
}

/** One backup or restore on the running stack; answers the result line's object. */
let runNumber = 0;
async function runOne(spec) {
  // Names unique within the stack: a serving child creates a source, destinations and a job per run.
  const tag = ++runNumber === 1 ? '' : ` ${runNumber}`;
  let started;
  let cpuAtStart;
  let childrenAtStart;
  // Wall time, CPU time and the memory timeline all count from the moment the run is triggered.
  const startClocks = () => {
    started = process.hrtime.bigint();
    cpuAtStart = process.cpuUsage();
    childrenAtStart = childrenCpuSeconds();
    timelineStart = started;
  };
  let execution;
  let ids = {};
  if (spec.mode === 'backup') {
    const sourceConfig =
      spec.kind === 'postgres'
        ? { host: '127.0.0.1', port: 5432, user: process.env.PGUSER ?? 'root', sslMode: 'disable' }
        : spec.kind === 'mysql'
          ? { host: '127.0.0.1', port: 3306, user: 'root', tls: 'disable' }
          : { paths: [spec.target] };
    const source = data(await holdfast.call('POST', '/api/adapters', { name: `bench ${spec.kind}${tag}`, type: 'database', adapterId: spec.kind, config: sourceConfig }));
    const storages = [];
    for (const [index, path] of spec.destinations.entries()) {
      storages.push(data(await holdfast.call('POST', '/api/adapters', { name: `bench local ${index}${tag}`, type: 'storage', adapterId: 'local', config: { path } })));
    }
    // 'age': a public-key profile; the private key is thrown away (the benchmark never reads the backup back).
    const vaultBody = spec.encrypt === 'age' ? { name: `bench public key${tag}`, publicKey: generateAgeIdentity().recipient } : { name: `bench key${tag}` };
    const vault = spec.encrypt ? data(await holdfast.call('POST', '/api/vault', vaultBody)) : null;
    const job = data(
      await holdfast.call('POST', '/api/jobs', {
        name: `bench ${spec.kind}${tag}`,
        schedule: '0 0 1 1 *',
        enabled: false,
        sourceId: source.id,
        databases: ['postgres', 'mysql'].includes(spec.kind) ? [spec.target] : [],
        compression: spec.compression,
        ...(spec.compressionLevel === undefined ? {} : { compressionLevel: spec.compressionLevel }),
        ...(spec.compressionThreads === undefined ? {} : { compressionThreads: spec.compressionThreads }),
        ...(spec.pgCompression === undefined ? {} : { pgCompression: spec.pgCompression }),
        ...(spec.archiveFormat === undefined ? {} : { archiveFormat: spec.archiveFormat }),
        ...(spec.fullEveryRuns === undefined ? {} : { fullEveryRuns: spec.fullEveryRuns }),
        ...(spec.fullEveryDays === undefined ? {} : { fullEveryDays: spec.fullEveryDays }),
        encryptionProfileId: vault?.id ?? null,
        skipVerification: spec.skipVerification ?? true,
        destinations: storages.map((storage, priority) => ({ configId: storage.id, priority })),
      }),
    );
    ids = { storageId: storages[0].id, sourceId: source.id };
    startClocks();
    const run = data(await holdfast.call('POST', `/api/jobs/${job.id}/run`));
    execution = await waitFor(run.executionId);
  } else {
    startClocks();
    const body = {
      file: spec.file,
      ...(spec.database ? { database: spec.database } : {}),
      ...(spec.targetPath ? { targetPath: spec.targetPath } : {}),
      ...(spec.paths ? { paths: spec.paths } : {}),
    };
    const run = data(await holdfast.call('POST', `/api/storage/${spec.storageId}/restore`, body));
    execution = await waitFor(run.executionId);
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  // CPU of every thread of this process during the run (main thread, libuv pool, workers), in seconds.
  const cpu = process.cpuUsage(cpuAtStart);
  const children = childrenCpuSeconds();
  const cpuSeconds = { user: cpu.user / 1e6, system: cpu.system / 1e6, childrenUser: children.user - childrenAtStart.user, childrenSystem: children.system - childrenAtStart.system };
  const status = await readFile('/proc/self/status', 'utf8');
  const peakRssKiB = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const errors = (execution.logs ?? []).filter((entry) => entry.level === 'error').map((entry) => entry.message);
  const warnings = (execution.logs ?? []).filter((entry) => entry.level === 'warn' || entry.level === 'warning').map((entry) => entry.message);
  const result = {
    status: execution.status,
    seconds,
    cpuSeconds,
    size: execution.size,
    path: execution.path,
    peakRssKiB,
    baselineRssKiB,
    baselineMemory,
    memoryPeak,
    errors,
    warnings,
    ...ids,
    ...(timeline ? { memorySamples } : {}),
  };
  return result;
}

/** Resets the per-run peaks (VmHWM, the sampled memory) and sets the run's environment; answers the undo. */
async function beginRun(spec) {
  for (const key of Object.keys(memoryPeak)) memoryPeak[key] = 0;
  memorySamples = [];
  timelineStart = null;
  // 5: reset the peak resident set size (VmHWM) to the current one (Linux, proc(5)).
  await writeFile('/proc/self/clear_refs', '5').catch(() => undefined);
  baselineRssKiB = Number(/VmRSS:\s+(\d+)/.exec(await readFile('/proc/self/status', 'utf8'))?.[1] ?? 0);
  baselineMemory = process.memoryUsage();
  const saved = Object.entries(spec.env ?? {}).map(([key, value]) => {
    const before = process.env[key];
    process.env[key] = value;
    return [key, before];
  });
  return () => {
    for (const [key, before] of saved) {
      if (before === undefined) delete process.env[key];
      else process.env[key] = before;
    }
  };
}

try {
  if (!serve) {
    process.stdout.write(`${JSON.stringify(await runOne(firstSpec))}\n`);
  } else {
    // One spec per line; the answer is written before the next line is read (runs never overlap).
    for await (const line of createInterface({ input: process.stdin, crlfDelay: Infinity })) {
      if (!line.trim()) continue;
      const spec = JSON.parse(line);
      const undo = await beginRun(spec);
      try {
        process.stdout.write(`${JSON.stringify(await runOne(spec))}\n`);
      } catch (error) {
        process.stdout.write(`${JSON.stringify({ status: 'Error', errors: [String(error?.message ?? error)] })}\n`);
      } finally {
        undo();
      }
    }
  }
} finally {
  clearInterval(sampler);
  if (timeline) clearInterval(timeline);
  await holdfast.close();
}
