// Scale-out simulation (issue 18, acceptance 5; `npm run bench:scale`; not part of `npm test`): N jobs with a tiny
// directory source and a local destination, scheduled across one hour, on several `apps/server/dist/main.js`
// processes sharing one throwaway PostgreSQL database. Prints one JSON object with the figures.
//
// Time is compressed: the processes run with HOLDFAST_SCHEDULER_TIME_SCALE=S and a shared origin, so the scheduler's
// hour passes in 60/S minutes. Every job fires once, at its own slot: job i gets the daily schedule of minute
// (first + i mod 60), so each cron minute of the hour holds N/60 jobs that fire together, exactly the bursts a real
// hour of minute-granular schedules makes. Compression shortens only the idle time between bursts; while each burst
// drains before the next one (60/S s later), every burst meets the same empty queue it would meet in real time.
//
//   HOLDFAST_SCALE_JOBS         jobs (default 1000)
//   HOLDFAST_SCALE_PROCESSES    server processes, all with role all (default 3)
//   HOLDFAST_SCALE_CONCURRENCY  maxConcurrentJobs (default 8)
//   HOLDFAST_SCALE_TIME_SCALE   scheduler time compression (default 6: the hour in 10 minutes)
//   HOLDFAST_SCALE_REQUESTS     timed requests per history/dashboard route (default 25)
//   HOLDFAST_SCALE_KEEP         1: keep the database and directories (their names are printed)
//   HOLDFAST_SCALE_NODE_ARGS    extra node arguments of the server processes (e.g. --cpu-prof --cpu-prof-dir=/tmp/prof)
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { createThrowawayPostgres } from '../harness/test-site.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const MAIN = join(here, '../../apps/server/dist/main.js');
const env = process.env;
const JOBS = Number(env.HOLDFAST_SCALE_JOBS ?? 1000);
const PROCESSES = Number(env.HOLDFAST_SCALE_PROCESSES ?? 3);
const CONCURRENCY = Number(env.HOLDFAST_SCALE_CONCURRENCY ?? 8);
const SCALE = Number(env.HOLDFAST_SCALE_TIME_SCALE ?? 6);
const REQUESTS = Number(env.HOLDFAST_SCALE_REQUESTS ?? 25);
const KEEP = env.HOLDFAST_SCALE_KEEP === '1';
for (const [name, value] of Object.entries({ HOLDFAST_SCALE_JOBS: JOBS, HOLDFAST_SCALE_PROCESSES: PROCESSES, HOLDFAST_SCALE_CONCURRENCY: CONCURRENCY, HOLDFAST_SCALE_TIME_SCALE: SCALE, HOLDFAST_SCALE_REQUESTS: REQUESTS })) {
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number`);
}
const MINUTE = 60_000;
/** The scheduler re-reads jobs and presets this often (its default). */
const RELOAD_MS = 5_000;
const ADMIN = { name: 'Admin', email: 'admin@example.test', password: 'correct horse battery staple' };

const log = (message) => process.stderr.write(`[scale-sim] ${message}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values, p) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
const round = (value, digits = 1) => (value === null ? null : Math.round(value * 10 ** digits) / 10 ** digits);

/** A server process; keeps only the log lines the simulation reads (a run logs several lines at info). */
function startProcess(name, processEnv) {
  const nodeArgs = (env.HOLDFAST_SCALE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, MAIN], { env: processEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  const kept = [];
  let stderr = '';
  const waiters = new Map();
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (!line.includes('"msg":"holdfast listening"') && !line.includes('"msg":"engine started"') && !line.includes('scheduler:') && !/"level":(4|5|6)0/.test(line)) return;
    const entry = JSON.parse(line);
    kept.push(entry);
    waiters.get(entry.msg)?.(entry);
  });
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const waitFor = (msg, timeoutMs = 60_000) =>
    new Promise((resolve, reject) => {
      const found = kept.find((entry) => entry.msg === msg);
      if (found) return resolve(found);
      const timer = setTimeout(() => reject(new Error(`${name}: no "${msg}" within ${timeoutMs} ms; stderr: ${stderr}`)), timeoutMs);
      void exited.then(() => reject(new Error(`${name} exited before "${msg}"; stderr: ${stderr}`)));
      waiters.set(msg, (entry) => {
        clearTimeout(timer);
        resolve(entry);
      });
    });
  return { name, child, kept, exited, waitFor, stderr: () => stderr };
}

/** CPU seconds (user + system) of a live process, from /proc. */
async function cpuSeconds(pid) {
  try {
    const fields = (await readFile(`/proc/${pid}/stat`, 'utf8')).split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return null;
  }
}

async function main() {
  const started = Date.now();
  const postgres = await createThrowawayPostgres();
  const db = new pg.Pool({ connectionString: postgres.url, max: 2 });
  const work = await mkdtemp(join(tmpdir(), 'holdfast-scale-sim-'));
  const sourceDir = join(work, 'source');
  const destDir = join(work, 'backups');
  await mkdir(sourceDir, { recursive: true });
  await mkdir(destDir, { recursive: true });
  await writeFile(join(sourceDir, 'tiny.txt'), randomBytes(512).toString('hex'));
  const origin = new Date();
  const schedulerNow = () => origin.getTime() + (Date.now() - origin.getTime()) * SCALE;
  const baseEnv = {
    PATH: env.PATH,
    PORT: '0',
    DATABASE_URL: postgres.url,
    HOLDFAST_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
    HOLDFAST_LOCAL_ROOTS: work,
    LOG_LEVEL: 'info',
    HOLDFAST_SCHEDULER_TIME_SCALE: String(SCALE),
    HOLDFAST_SCHEDULER_TIME_ORIGIN: origin.toISOString(),
  };
  const servers = [];
  const stopAll = async () => {
    for (const server of servers) if (server.child.exitCode === null) server.child.kill('SIGTERM');
    await Promise.all(servers.map((server) => server.exited));
  };
  // Interrupted (Ctrl-C): stop the servers and drop the database all the same.
  const onSignal = () => {
    log('interrupted; stopping the servers and dropping the database');
    void stopAll()
      .then(() => db.end())
      .then(() => (KEEP ? undefined : Promise.all([postgres.drop(), rm(work, { recursive: true, force: true })])))
      .finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const spawnServer = async (index) => {
      const dataDir = join(work, `data-${index}`);
      await mkdir(dataDir);
      const server = startProcess(`p${index}`, { ...baseEnv, HOLDFAST_DATA_DIR: dataDir });
      servers.push(server);
      const listening = await server.waitFor('holdfast listening');
      server.url = `http://127.0.0.1:${listening.port}`;
      server.engineId = (await server.waitFor('engine started')).processId;
      return server;
    };
    const first = await spawnServer(0);
    const setup = await fetch(`${first.url}/api/auth/setup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    if (setup.status !== 201) throw new Error(`setup: ${setup.status} ${await setup.text()}`);
    const signIn = await fetch(`${first.url}/api/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: ADMIN.email, password: ADMIN.password }) });
    const session = { cookie: (signIn.headers.get('set-cookie') ?? '').split(';')[0], csrf: (await signIn.json()).csrfToken };
    const call = async (server, method, path, body) => {
      const headers = { cookie: session.cookie, 'x-csrf-token': session.csrf };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${server.url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const text = await response.text();
      if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
      return text ? JSON.parse(text) : undefined;
    };
    // One process writes settings; the others start after and read them fresh. Rate limits are lifted: the
    // simulation sends thousands of requests from one address.
    await call(first, 'PUT', '/api/settings', { maxConcurrentJobs: CONCURRENCY, authPoints: 100_000, apiPoints: 100_000, mutationPoints: 100_000 });
    const settingsAt = Date.now();
    for (let i = 1; i < PROCESSES; i++) await spawnServer(i);
    await sleep(Math.max(0, settingsAt + 5_500 - Date.now()));
    log(`${PROCESSES} processes up on ${postgres.name}; scheduler time runs ${SCALE}x`);

    const source = await call(first, 'POST', '/api/adapters', { name: 'tiny', type: 'database', adapterId: 'directory', config: { paths: [sourceDir] } });
    const disk = await call(first, 'POST', '/api/adapters', { name: 'disk', type: 'storage', adapterId: 'local', config: { path: destDir } });
    // 60 presets, one per minute of the hour; jobs link to them, so the whole hour is planned by 60 updates.
    const presets = [];
    for (let minute = 0; minute < 60; minute++) presets.push(await call(first, 'POST', '/api/schedule-presets', { name: `minute ${minute}`, schedule: '0 0 1 1 *' }));
    const createdAt = Date.now();
    let next = 0;
    const jobOfPreset = new Map();
    const workers = Array.from({ length: 12 }, async (_, worker) => {
      for (;;) {
        const i = next++;
        if (i >= JOBS) return;
        const server = servers[(i + worker) % servers.length];
        const job = await call(server, 'POST', '/api/jobs', { name: `sim-${String(i).padStart(5, '0')}`, schedulePresetId: presets[i % 60].id, sourceId: source.id, destinations: [{ configId: disk.id, priority: 0 }] });
        jobOfPreset.set(job.id, i % 60);
        if (i > 0 && i % 1000 === 0) log(`${i} jobs created`);
      }
    });
    await Promise.all(workers);
    const jobCreationSeconds = (Date.now() - createdAt) / 1000;
    log(`${JOBS} jobs created in ${jobCreationSeconds.toFixed(1)} s`);

    // The hour: its first slot leaves the scheduler two reloads (wall clock) to see the new presets.
    const leadMinutes = Math.ceil(((2 * RELOAD_MS + 3_000) * SCALE) / MINUTE);
    const firstSlot = Math.ceil(schedulerNow() / MINUTE) * MINUTE + leadMinutes * MINUTE;
    const slotOfPreset = (p) => firstSlot + p * MINUTE;
    for (const [p, preset] of presets.entries()) {
      const at = new Date(slotOfPreset(p));
      await call(first, 'PUT', `/api/schedule-presets/${preset.id}`, { schedule: `${at.getUTCMinutes()} ${at.getUTCHours()} * * *` });
    }
    const wall = (schedulerTime) => origin.getTime() + (schedulerTime - origin.getTime()) / SCALE;
    const hourEndsWall = wall(slotOfPreset(59));
    log(`the hour fires from ${new Date(wall(firstSlot)).toISOString()} to ${new Date(hourEndsWall).toISOString()} (wall clock)`);

    // Sample the Running count (total and per process) until every job has run.
    const runningSamples = [];
    // The machine may be shared: the load during the hour is part of the result.
    const loadSamples = [];
    const cpuAtStart = await Promise.all(servers.map((server) => cpuSeconds(server.child.pid)));
    const deadline = hourEndsWall + 10 * MINUTE;
    let finished = 0;
    for (;;) {
      const { rows } = await db.query(`SELECT count(*) FILTER (WHERE status = 'Running')::int AS running, count(*) FILTER (WHERE status NOT IN ('Pending', 'Running'))::int AS done FROM executions WHERE trigger_type = 'Scheduler'`);
      runningSamples.push(rows[0].running);
      loadSamples.push(loadavg()[0]);
      finished = rows[0].done;
      if (Date.now() > hourEndsWall + 2_000 && finished >= JOBS) break;
      if (Date.now() > deadline) {
        log(`giving up: ${finished} of ${JOBS} scheduled runs finished`);
        break;
      }
      await sleep(200);
    }
    const cpuAtEnd = await Promise.all(servers.map((server) => cpuSeconds(server.child.pid)));
    const hourWallSeconds = (Date.now() - wall(firstSlot)) / 1000;

    // Every slot exactly once: one scheduled execution per job, at the slot of its preset.
    const { rows: runs } = await db.query(`SELECT job_id, status, scheduled_for, started_at, claimed_by FROM executions WHERE trigger_type = 'Scheduler'`);
    const perJob = new Map();
    for (const row of runs) perJob.set(row.job_id, [...(perJob.get(row.job_id) ?? []), row]);
    const twice = [...perJob.values()].filter((list) => list.length > 1).length;
    const missing = [...jobOfPreset.keys()].filter((jobId) => !perJob.has(jobId)).length;
    const wrongSlot = runs.filter((row) => row.scheduled_for?.getTime() !== slotOfPreset(jobOfPreset.get(row.job_id))).length;
    const statuses = {};
    for (const row of runs) statuses[row.status] = (statuses[row.status] ?? 0) + 1;
    const delays = runs.filter((row) => row.scheduled_for && row.status !== 'Pending').map((row) => (row.started_at.getTime() - wall(row.scheduled_for.getTime())) / 1000);
    const skippedLines = servers.flatMap((server) => server.kept.filter((entry) => /not queued again/.test(entry.msg))).length;
    const leaders = servers.filter((server) => server.kept.some((entry) => entry.msg === 'scheduler: this process is the scheduler')).map((server) => server.name);
    const ranBy = {};
    for (const row of runs) {
      const name = servers.find((server) => server.engineId === row.claimed_by)?.name ?? 'unknown';
      ranBy[name] = (ranBy[name] ?? 0) + 1;
    }

    // History and dashboard over the executions: median and p95 of sequential requests (after one warm-up each).
    const { rows: [{ total }] } = await db.query(`SELECT count(*)::int AS total FROM executions`);
    const today = new Date().toISOString().slice(0, 10);
    const routes = {
      'GET /api/history': '/api/history?page=1&pageSize=50',
      'GET /api/history?status=Success': '/api/history?status=Success&page=1&pageSize=50',
      'GET /api/history?trigger=Scheduler&page=40': `/api/history?trigger=Scheduler&page=40&pageSize=50`,
      'GET /api/history?search=sim-0042': '/api/history?search=sim-0042&page=1&pageSize=50',
      'GET /api/history?facets=true': '/api/history?page=1&pageSize=50&facets=true',
      'GET /api/dashboard/stats': '/api/dashboard/stats',
      'GET /api/dashboard/calendar': `/api/dashboard/calendar?from=${today}&to=${today}`,
    };
    const timings = {};
    for (const [label, path] of Object.entries(routes)) {
      // The first request also pays for whatever the route caches (the job list behind stats and search).
      const cold = performance.now();
      await call(servers[1 % servers.length], 'GET', path);
      const firstMs = performance.now() - cold;
      const times = [];
      for (let i = 0; i < REQUESTS; i++) {
        const t0 = performance.now();
        await call(servers[1 % servers.length], 'GET', path);
        times.push(performance.now() - t0);
      }
      timings[label] = { firstMs: round(firstMs), medianMs: round(percentile(times, 50)), p95Ms: round(percentile(times, 95)) };
    }

    const result = {
      jobs: JOBS,
      processes: PROCESSES,
      maxConcurrentJobs: CONCURRENCY,
      timeScale: SCALE,
      jobsPerSlot: round(JOBS / 60),
      slotGapWallSeconds: round(60 / SCALE),
      jobCreationSeconds: round(jobCreationSeconds),
      hourWallSeconds: round(hourWallSeconds),
      scheduled: { executions: runs.length, finished, statuses, missing, twice, wrongSlot, skippedLogLines: skippedLines },
      delaySeconds: { p50: round(percentile(delays, 50), 2), p95: round(percentile(delays, 95), 2), p99: round(percentile(delays, 99), 2), max: round(percentile(delays, 100), 2) },
      maxRunningSampled: Math.max(...runningSamples),
      runsPerProcess: ranBy,
      schedulerProcesses: leaders,
      cpuSecondsPerProcess: servers.map((server, i) => (cpuAtStart[i] === null || cpuAtEnd[i] === null ? null : round(cpuAtEnd[i] - cpuAtStart[i]))),
      executionsInDatabase: total,
      routes: timings,
      wallSeconds: round((Date.now() - started) / 1000),
      machine: { cpus: cpus().length, loadAverage1mDuringHour: { mean: round(loadSamples.reduce((sum, v) => sum + v, 0) / Math.max(1, loadSamples.length)), max: round(Math.max(...loadSamples)) } },
      warnings: servers.flatMap((server) => server.kept.filter((entry) => entry.level >= 40).map((entry) => `${server.name}: ${entry.msg}${entry.reason ? ` (${entry.reason})` : ''}${entry.err?.message ? ` (${entry.err.message})` : ''}`)).slice(0, 20),
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await stopAll();
    await db.end();
    if (KEEP) log(`kept database ${postgres.name} and ${work}`);
    else {
      await postgres.drop();
      await rm(work, { recursive: true, force: true });
    }
  }
}

main().catch((error) => {
  process.stderr.write(`[scale-sim] failed: ${error.stack ?? error}\n`);
  process.exit(1);
});
