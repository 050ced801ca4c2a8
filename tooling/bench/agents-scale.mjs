// Remote agents at scale (issue 48, scope 5 and acceptance 4; `npm run bench:agents`; not part of `npm test`): one
// real server process (apps/server/dist/main.js) holds N simulated agents connected and idle, and the bench measures
//   - memory per connected agent: the server's RSS and V8 heap (its /metrics) before and after they connect;
//   - the time to create N agents through the API and to connect (enroll) all of them;
//   - p50/p99 of GET /api/jobs with the agents connected vs. without (baseline in the same run, same pacing);
//   - presence writes: every connected agent's last_seen_at is written each ping round (15 s), batched; the server's
//     CPU over an idle window with and without the agents gives their cost per ping round;
//   - dispatch to one of N agents: POST /api/adapters/test-connection of a source bound to a random agent makes the
//     server send that agent a `call` frame (check, then detectVersion); timed from the request's start to the
//     agent's receipt of the first call, and the whole API answer. Also: disable -> the agent receives its close frame
//     (4003), then enable -> the agent reconnects (authenticate handshake), both timed.
// Simulated agents are `ws` clients in worker processes (tooling/bench/lib/simulated-agents.mjs) doing the real
// enroll + Ed25519 challenge handshake. Prints one JSON object with the figures.
//
//   HOLDFAST_AGENTS_BENCH_AGENTS     agents (default 500)
//   HOLDFAST_AGENTS_BENCH_WORKERS    worker processes holding them (default 4)
//   HOLDFAST_AGENTS_BENCH_REQUESTS   timed GET /api/jobs per phase (default 250), one every PACE ms
//   HOLDFAST_AGENTS_BENCH_PACE_MS    pause between those requests (default 60: a phase spans a ping round of 15 s)
//   HOLDFAST_AGENTS_BENCH_IDLE_S     idle window for the CPU measurement (default 31: two ping rounds)
//   HOLDFAST_AGENTS_BENCH_DISPATCHES disable/enable round trips (default 20)
//   HOLDFAST_AGENTS_BENCH_POSTGRES   1: the server on a throwaway PostgreSQL database (else the embedded libsql)
import { fork, spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const MAIN = join(here, '../../apps/server/dist/main.js');
const WORKER = join(here, 'lib/simulated-agents.mjs');
const GC_HOOK = join(here, 'lib/gc-on-signal.cjs');
const env = process.env;
const AGENTS = Number(env.HOLDFAST_AGENTS_BENCH_AGENTS ?? 500);
const WORKERS = Number(env.HOLDFAST_AGENTS_BENCH_WORKERS ?? 4);
const REQUESTS = Number(env.HOLDFAST_AGENTS_BENCH_REQUESTS ?? 250);
const PACE_MS = Number(env.HOLDFAST_AGENTS_BENCH_PACE_MS ?? 60);
const IDLE_S = Number(env.HOLDFAST_AGENTS_BENCH_IDLE_S ?? 31);
const DISPATCHES = Number(env.HOLDFAST_AGENTS_BENCH_DISPATCHES ?? 20);
const ON_POSTGRES = env.HOLDFAST_AGENTS_BENCH_POSTGRES === '1';
for (const [name, value] of Object.entries({
  HOLDFAST_AGENTS_BENCH_AGENTS: AGENTS,
  HOLDFAST_AGENTS_BENCH_WORKERS: WORKERS,
  HOLDFAST_AGENTS_BENCH_REQUESTS: REQUESTS,
  HOLDFAST_AGENTS_BENCH_IDLE_S: IDLE_S,
})) {
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer`);
}
const ADMIN = {
  email: 'agents-bench@example.test',
  password: 'correct horse battery staple',
};
/** Jobs in the catalog, so GET /api/jobs returns a realistic page rather than an empty list. */
const JOBS = 50;
const CLK_TCK = 100;

const log = (message) => process.stderr.write(`[agents-scale] ${message}\n`);
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const now = () => performance.timeOrigin + performance.now();
const round = (value, digits = 1) => (value === null || value === undefined ? null : Math.round(value * 10 ** digits) / 10 ** digits);
const percentile = (values, p) => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};
const median = (values) => percentile(values, 50);
const summary = (values) => ({
  count: values.length,
  p50: round(percentile(values, 50)),
  p90: round(percentile(values, 90)),
  p99: round(percentile(values, 99)),
  max: round(Math.max(...values)),
});

/** The server process; only the lines the bench reads are kept. */
function startServer(processEnv) {
  const child = spawn(process.execPath, ['--expose-gc', '-r', GC_HOOK, MAIN], {
    env: processEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let errors = 0;
  const listening = new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (/"level":(5|6)0/.test(line)) errors += 1;
      if (line.includes('"msg":"holdfast listening"')) resolve(JSON.parse(line));
    });
    child.on('exit', (code) => reject(new Error(`server exited (${code}) before listening: ${stderr}`)));
  });
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return { child, listening, errors: () => errors };
}

/** RSS from /proc and the V8 heap from the server's own /metrics (loopback is allowed without a token). */
async function memoryOf(server) {
  // A full collection first (tooling/bench/lib/gc-on-signal.cjs): the heap then holds live objects only.
  process.kill(server.child.pid, 'SIGUSR2');
  await sleep(500);
  const status = await readFile(`/proc/${server.child.pid}/status`, 'utf8');
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(status)[1]) * 1024;
  const metrics = await (await fetch(`${server.url}/metrics`)).text();
  const metric = (name) => Number(new RegExp(`^${name} ([0-9.e+]+)$`, 'm').exec(metrics)?.[1] ?? NaN);
  return {
    rss,
    heapUsed: metric('holdfast_process_nodejs_heap_size_used_bytes'),
    external: metric('holdfast_process_nodejs_external_memory_bytes'),
  };
}

/** Median of a few samples a second apart: one sample may catch a collection half done. */
async function settledMemory(server, samples = 5) {
  const taken = [];
  for (let i = 0; i < samples; i++) {
    taken.push(await memoryOf(server));
    await sleep(1_000);
  }
  return {
    rss: median(taken.map((m) => m.rss)),
    heapUsed: median(taken.map((m) => m.heapUsed)),
    external: median(taken.map((m) => m.external)),
  };
}

/** The server's CPU time (user + system) in ms. */
async function cpuMsOf(server) {
  const fields = (await readFile(`/proc/${server.child.pid}/stat`, 'utf8')).split(') ')[1].split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK;
}

async function main() {
  const work = await mkdtemp(join(tmpdir(), 'holdfast-agents-bench-'));
  const dataDir = join(work, 'data');
  const sourceDir = join(work, 'source');
  const destDir = join(work, 'dest');
  for (const dir of [dataDir, sourceDir, destDir]) await mkdir(dir);
  let postgres;
  if (ON_POSTGRES) {
    const { createThrowawayPostgres } = await import('../harness/test-site.mjs');
    postgres = await createThrowawayPostgres();
  }
  const server = startServer({
    PATH: env.PATH,
    PORT: '0',
    HOLDFAST_DATA_DIR: dataDir,
    ...(postgres ? { DATABASE_URL: postgres.url } : {}),
    HOLDFAST_LOCAL_ROOTS: work,
    HOLDFAST_ADMIN_EMAIL: ADMIN.email,
    HOLDFAST_ADMIN_PASSWORD: ADMIN.password,
    LOG_LEVEL: 'info',
  });
  const workers = [];
  try {
    server.url = `http://127.0.0.1:${(await server.listening).port}`;
    const signIn = await fetch(`${server.url}/api/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(ADMIN),
    });
    if (signIn.status !== 200) throw new Error(`sign-in: ${signIn.status} ${await signIn.text()}`);
    const session = {
      cookie: (signIn.headers.get('set-cookie') ?? '').split(';')[0],
      csrf: (await signIn.json()).csrfToken,
    };
    const call = async (method, path, body) => {
      const headers = { cookie: session.cookie, 'x-csrf-token': session.csrf };
      if (body !== undefined) headers['content-type'] = 'application/json';
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
      return text ? JSON.parse(text) : undefined;
    };
    // The bench sends thousands of requests from one address: rate limits lifted (they apply within 5 s).
    await call('PUT', '/api/settings', {
      authPoints: 100_000,
      apiPoints: 100_000,
      mutationPoints: 100_000,
    });
    const source = await call('POST', '/api/adapters', {
      name: 'tiny',
      type: 'database',
      adapterId: 'directory',
      config: { paths: [sourceDir] },
    });
    const disk = await call('POST', '/api/adapters', {
      name: 'disk',
      type: 'storage',
      adapterId: 'local',
      config: { path: destDir },
    });
    for (let i = 0; i < JOBS; i++)
      await call('POST', '/api/jobs', {
        name: `job-${String(i).padStart(3, '0')}`,
        sourceId: source.id,
        schedule: '0 3 * * *',
        destinations: [{ configId: disk.id, priority: 0 }],
      });
    await sleep(5_500);

    const timeJobsList = async (label) => {
      const times = [];
      for (let i = 0; i < REQUESTS; i++) {
        const started = performance.now();
        const response = await fetch(`${server.url}/api/jobs`, {
          headers: { cookie: session.cookie },
        });
        const body = await response.json();
        times.push(performance.now() - started);
        if (response.status !== 200 || (body.data ?? body.jobs ?? body).length === 0) throw new Error(`GET /api/jobs (${label}): ${response.status}`);
        await sleep(PACE_MS);
      }
      return summary(times);
    };
    const idleCpu = async () => {
      const before = await cpuMsOf(server);
      await sleep(IDLE_S * 1000);
      return (await cpuMsOf(server)) - before;
    };

    log(`server up on ${postgres ? 'PostgreSQL' : 'libsql'}; baseline without agents`);
    const memoryBefore = await settledMemory(server);
    const jobsWithout = await timeJobsList('without agents');
    const cpuWithoutMs = await idleCpu();

    log(`creating ${AGENTS} agents through the API`);
    const createdStarted = performance.now();
    const created = [];
    let nextName = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (;;) {
          const i = nextName++;
          if (i >= AGENTS) return;
          const answer = await call('POST', '/api/agents', {
            name: `sim-${String(i).padStart(4, '0')}`,
          });
          created.push({ id: answer.agent.id, token: answer.enrollmentToken });
        }
      })
    );
    const createMs = performance.now() - createdStarted;

    log(`connecting ${AGENTS} simulated agents from ${WORKERS} worker processes`);
    const handshakes = [];
    const failures = [];
    const closes = new Map();
    const waiters = new Map();
    const workerOf = new Map();
    for (let w = 0; w < WORKERS; w++) {
      const child = fork(WORKER, [], {
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      const entry = { child, done: undefined, ready: undefined };
      entry.ready = new Promise((resolve) => child.once('message', resolve));
      child.on('message', (message) => {
        if (message.type === 'connected') handshakes.push(message.ms);
        if (message.type === 'failed') failures.push(message);
        if (message.type === 'closed') closes.set(message.id, message);
        waiters.get(`${message.type}:${message.id ?? w}`)?.(message);
      });
      workers.push(entry);
    }
    await Promise.all(workers.map((entry) => entry.ready));
    const waitFor = (key, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no ${key} within ${timeoutMs} ms`)), timeoutMs);
        waiters.set(key, (message) => {
          clearTimeout(timer);
          waiters.delete(key);
          resolve(message);
        });
      });
    const connectStarted = performance.now();
    const connected = workers.map((entry, w) => {
      const share = created.filter((_, i) => i % WORKERS === w);
      for (const agent of share) workerOf.set(agent.id, entry);
      const done = waitFor(`connect-done:${w}`, 300_000);
      entry.child.send({ type: 'connect', url: server.url, agents: share });
      return done;
    });
    await Promise.all(connected);
    const connectAllMs = performance.now() - connectStarted;
    if (failures.length > 0) throw new Error(`${failures.length} agents failed to connect, first: ${failures[0].error}`);
    // Online once the hello is recorded: wait until the API lists every one online.
    let online = 0;
    for (let tries = 0; tries < 60; tries++) {
      online = (await call('GET', '/api/agents')).agents.filter((agent) => agent.status === 'online').length;
      if (online === AGENTS) break;
      await sleep(500);
    }
    const allOnlineMs = performance.now() - connectStarted;
    if (online !== AGENTS) throw new Error(`only ${online} of ${AGENTS} agents online`);

    log(`${AGENTS} agents online in ${Math.round(allOnlineMs)} ms; measuring with them connected`);
    await sleep(3_000);
    const memoryAfter = await settledMemory(server);
    const jobsWith = await timeJobsList('with agents');
    const pingsBefore = await countPings(workers);
    const cpuWithMs = await idleCpu();
    const pingsAfter = await countPings(workers);
    if (pingsAfter.open !== AGENTS) throw new Error(`${AGENTS - pingsAfter.open} agents dropped while idle`);

    log(`dispatch: ${DISPATCHES} connection tests of sources bound to random agents (call frames)`);
    const callReceivedMs = [];
    const callAnswerMs = [];
    for (let i = 0; i < DISPATCHES; i++) {
      const agent = created[Math.floor(Math.random() * created.length)];
      const source = await call('POST', '/api/adapters', {
        name: `remote-${i}`,
        type: 'database',
        adapterId: 'postgres',
        agentId: agent.id,
        config: { host: '10.255.0.1', port: 5432, user: 'postgres', password: 'only-the-agent-gets-this' },
      });
      const received = waitFor(`call:${agent.id}`);
      const started = now();
      const answer = await call('POST', '/api/adapters/test-connection', { id: source.id });
      callAnswerMs.push(now() - started);
      if (answer.success !== true) throw new Error(`test-connection through agent ${agent.id}: ${JSON.stringify(answer)}`);
      const first = await received;
      if (first.method !== 'check') throw new Error(`first call was ${first.method}, expected check`);
      callReceivedMs.push(first.at - started);
    }

    log(`dispatch: ${DISPATCHES} close frames (disable -> close 4003), each followed by enable + reconnect`);
    const dispatchMs = [];
    const answerMs = [];
    const reconnectMs = [];
    for (let i = 0; i < DISPATCHES; i++) {
      const agent = created[Math.floor(Math.random() * created.length)];
      const entry = workerOf.get(agent.id);
      closes.delete(agent.id);
      const closed = waitFor(`closed:${agent.id}`);
      const started = now();
      await call('PATCH', `/api/agents/${agent.id}`, { enabled: false });
      answerMs.push(now() - started);
      const frame = await closed;
      if (frame.code !== 4003) throw new Error(`agent ${agent.id} closed with ${frame.code}, expected 4003`);
      dispatchMs.push(frame.at - started);
      await call('PATCH', `/api/agents/${agent.id}`, { enabled: true });
      const back = waitFor(`reconnected:${agent.id}`);
      entry.child.send({ type: 'reconnect', id: agent.id, url: server.url });
      reconnectMs.push((await back).ms);
    }

    const pingRounds = (pingsAfter.pings - pingsBefore.pings) / AGENTS;
    const perAgent = (field) => round((memoryAfter[field] - memoryBefore[field]) / AGENTS / 1024, 1);
    return {
      bench: 'agents-scale',
      date: new Date().toISOString(),
      machine: {
        cpus: cpus().length,
        model: cpus()[0]?.model,
        memoryGiB: round(totalmem() / 2 ** 30),
        node: process.version,
        loadavg: loadavg().map((v) => round(v, 2)),
      },
      database: postgres ? 'postgresql' : 'libsql',
      agents: AGENTS,
      workers: WORKERS,
      createAgentsMs: round(createMs, 0),
      connectAllMs: round(connectAllMs, 0),
      allOnlineInApiMs: round(allOnlineMs, 0),
      handshakeMs: summary(handshakes),
      memory: {
        before: {
          rssMiB: round(memoryBefore.rss / 2 ** 20),
          heapUsedMiB: round(memoryBefore.heapUsed / 2 ** 20),
        },
        after: {
          rssMiB: round(memoryAfter.rss / 2 ** 20),
          heapUsedMiB: round(memoryAfter.heapUsed / 2 ** 20),
        },
        perAgentKiB: {
          rss: perAgent('rss'),
          heapUsed: perAgent('heapUsed'),
          external: perAgent('external'),
        },
      },
      getJobsMs: {
        withoutAgents: jobsWithout,
        withAgents: jobsWith,
        requestsEvery: `${PACE_MS} ms`,
      },
      presence: {
        // The heartbeat writes presence in one statement per 500 agents (plugins/agents AgentStore.touchAll).
        rowsWrittenPerPingRound: AGENTS,
        statementsPerPingRound: Math.ceil(AGENTS / 500),
        pingIntervalS: 15,
        idleWindowS: IDLE_S,
        pingRoundsInWindow: round(pingRounds, 2),
        serverCpuMs: {
          withoutAgents: round(cpuWithoutMs, 0),
          withAgents: round(cpuWithMs, 0),
        },
        cpuMsPerPingRound: pingRounds > 0 ? round((cpuWithMs - cpuWithoutMs) / pingRounds, 0) : null,
        cpuMsPerAgentPing: pingRounds > 0 ? round((cpuWithMs - cpuWithoutMs) / pingRounds / AGENTS, 3) : null,
      },
      dispatch: {
        call: {
          what: 'POST /api/adapters/test-connection of a source bound to one of the agents: request start -> that agent receives the call frame (check); answer = both calls (check, detectVersion) answered',
          callReceivedMs: summary(callReceivedMs),
          apiAnswerMs: summary(callAnswerMs),
        },
        close: {
          what: 'PATCH /api/agents/:id {enabled:false}: request start -> that agent receives its close frame (4003); then enabled and reconnected',
          frameReceivedMs: summary(dispatchMs),
          apiAnswerMs: summary(answerMs),
          reconnectHandshakeMs: summary(reconnectMs),
        },
      },
      serverErrorLines: server.errors(),
    };
  } finally {
    for (const entry of workers) if (entry.child.connected) entry.child.send({ type: 'stop' });
    if (server.child.exitCode === null) {
      server.child.kill('SIGTERM');
      await new Promise((resolve) => server.child.once('exit', resolve));
    }
    await postgres?.drop();
    await rm(work, { recursive: true, force: true });
  }
}

/** Pings the agents have seen so far, and how many are still open, over every worker. */
async function countPings(workers) {
  const answers = await Promise.all(
    workers.map(
      (entry) =>
        new Promise((resolve) => {
          const listener = (message) => {
            if (message.type !== 'counts') return;
            entry.child.off('message', listener);
            resolve(message);
          };
          entry.child.on('message', listener);
          entry.child.send({ type: 'counts' });
        })
    )
  );
  return {
    pings: answers.reduce((sum, a) => sum + a.pings, 0),
    open: answers.reduce((sum, a) => sum + a.open, 0),
  };
}

main().then(
  (result) => {
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    process.exit(0);
  },
  (error) => {
    log(error.stack ?? String(error));
    process.exit(1);
  }
);
