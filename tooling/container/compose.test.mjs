// compose.scale.yaml with podman-compose: PostgreSQL, one `api` and two `worker` processes sharing the database and
// the system key. 30 queued runs are spread over both workers and each runs once; killing one worker mid-run
// leaves its run `interrupted` (closed by the other worker) and the rest of the queue goes on.
// The PostgreSQL service runs a local image built from Debian's packages (postgres/Containerfile): no registry here.
// Run alone: npm run test:container -- --test-name-pattern compose
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { chownSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { HoldfastApi, waitForHealth } from './api.mjs';
import { buildImage } from './image-build.mjs';
import { podman, podmanEnv, run } from './podman.mjs';

const here = fileURLToPath(new URL('.', import.meta.url));
const repository = fileURLToPath(new URL('../..', import.meta.url));
const id = randomBytes(4).toString('hex');
const project = `hfscale${id}`;
const port = 39_000 + Math.floor(Math.random() * 900);
const baseUrl = `http://127.0.0.1:${port}`;
const dir = mkdtempSync(join(tmpdir(), 'holdfast-compose-'));
const RUNS = 30;
const UID = 10001;
let env;

const compose = (args, options = {}) => run('podman-compose', ['-p', project, '-f', 'compose.scale.yaml', '-f', 'compose.test.yaml', ...args], { cwd: dir, env, ...options });
const container = (service) => `${project}_${service}_1`;
const sql = (query) => podman(['exec', container('postgres'), 'psql', '-h', '/tmp', '-U', 'holdfast', '-d', 'holdfast', '-qAt', '-c', query]).stdout.trim();
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The local PostgreSQL image, rebuilt only when its recipe changes. */
function postgresImage(base) {
  const recipe = ['Containerfile', 'entrypoint.sh'].map((file) => readFileSync(join(here, 'postgres', file), 'utf8')).join('\n');
  const image = `localhost/holdfast-test-postgres:17-${createHash('sha256').update(recipe + base).digest('hex').slice(0, 12)}`;
  if (podman(['image', 'exists', image], { allowFailure: true }).status !== 0) {
    podman(['build', '--network=host', '--build-arg', `BASE=${base}`, '-t', image, join(here, 'postgres')]);
  }
  return image;
}

async function until(what, check, timeoutMs = 120_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(500);
  }
}

describe('compose.scale.yaml', { concurrency: false }, () => {
  let api;
  let jobs = [];

  before(async () => {
    const built = buildImage();
    env = { ...podmanEnv(), HOLDFAST_IMAGE: built.image, HOLDFAST_POSTGRES_IMAGE: postgresImage(built.base), HOLDFAST_PORT: String(port) };
    // The committed compose file, as a user would take it from the repository.
    writeFileSync(join(dir, 'compose.scale.yaml'), run('git', ['-C', repository, 'show', 'HEAD:compose.scale.yaml'], { env: process.env }).stdout);
    // Short liveness timings so a killed worker is noticed in seconds instead of 30 s.
    writeFileSync(join(dir, 'compose.test.yaml'), [
      'services:',
      ...['api', 'worker1', 'worker2', 'migrate'].flatMap((service) => [
        `  ${service}:`, '    environment:',
        '      HOLDFAST_ENGINE_HEARTBEAT_MS: "1000"', '      HOLDFAST_ENGINE_STALE_MS: "6000"', '      HOLDFAST_ENGINE_POLL_MS: "500"',
      ]),
    ].join('\n'));
    writeFileSync(join(dir, 'holdfast.key'), randomBytes(32).toString('hex'), { mode: 0o600 });
    writeFileSync(join(dir, 'database_url'), 'postgres://holdfast:change-me@postgres:5432/holdfast', { mode: 0o600 });
    for (const file of ['holdfast.key', 'database_url']) chownSync(join(dir, file), UID, UID);
    // podman-compose 1.0 does not wait for depends_on conditions: start in the order they describe.
    compose(['up', '-d', '--no-build', 'postgres']);
    await until('postgres', () => podman(['exec', container('postgres'), 'pg_isready', '-h', '127.0.0.1', '-U', 'holdfast'], { allowFailure: true }).status === 0);
    podman(['exec', container('postgres'), 'psql', '-h', '/tmp', '-U', 'holdfast', '-d', 'holdfast', '-qc',
      'CREATE DATABASE fixture']);
    podman(['exec', container('postgres'), 'psql', '-h', '/tmp', '-U', 'holdfast', '-d', 'fixture', '-qc',
      'CREATE TABLE items AS SELECT i AS id, md5(i::text) AS name FROM generate_series(1, 2000) AS i']);
    compose(['up', '-d', '--no-build', 'migrate']);
    await until('migrate to finish', () => podman(['inspect', '--format', '{{.State.Status}}', container('migrate')]).stdout.trim() === 'exited');
    assert.equal(podman(['inspect', '--format', '{{.State.ExitCode}}', container('migrate')]).stdout.trim(), '0', podman(['logs', container('migrate')], { allowFailure: true }).stderr);
    compose(['up', '-d', '--no-build', 'api', 'worker1', 'worker2']);
    await waitForHealth(baseUrl, Date.now());
  });

  after(() => {
    compose(['down', '-v', '-t', '5'], { allowFailure: true });
    rmSync(dir, { recursive: true, force: true });
  });

  test(`${RUNS} queued runs are spread over both workers and each runs once`, async () => {
    api = new HoldfastApi(baseUrl);
    await api.call('POST', '/api/auth/setup', { email: 'admin@example.com', password: `compose-test-${id}` });
    await api.signIn('admin@example.com', `compose-test-${id}`);
    // 30 jobs and 30 runs are 60 mutations from one IP, above the default 20 a minute; waiting for 30 runs at once
    // polls each twice a second, above the default 100 reads a minute. The test is one client acting for many.
    await api.call('PUT', '/api/settings', { mutationPoints: 1000, apiPoints: 100_000 });
    const processes = await until('two workers registered', () => {
      const rows = sql("SELECT id FROM engine_processes WHERE role = 'worker'").split('\n').filter(Boolean);
      return rows.length === 2 ? rows : undefined;
    });
    podman(['exec', container('worker1'), 'mkdir', '-p', '/data/backups/scale']);
    const storage = await api.call('POST', '/api/adapters', { name: 'shared', type: 'storage', adapterId: 'local', config: { path: '/data/backups/scale' } });
    const source = await api.call('POST', '/api/adapters', { name: 'pg', type: 'database', adapterId: 'postgres', config: { host: 'postgres', port: 5432, user: 'holdfast', password: 'change-me', sslMode: 'disable' } });
    jobs = [];
    for (let index = 0; index < RUNS; index++) {
      jobs.push(await api.call('POST', '/api/jobs', {
        name: `scale ${index}`, schedule: '0 0 1 1 *', enabled: false, sourceId: source.id, databases: ['fixture'],
        compression: 'GZIP', destinations: [{ configId: storage.id, priority: 0 }],
      }));
    }
    const queued = await Promise.all(jobs.map((job) => api.call('POST', `/api/jobs/${job.id}/run`)));
    const finished = await Promise.all(queued.map(({ executionId }) => api.waitForRun(executionId, 300_000)));
    assert.deepEqual(finished.map((run) => run.status), Array(RUNS).fill('Success'));
    const claims = sql(`SELECT claimed_by, count(*) FROM executions WHERE id IN (${queued.map(({ executionId }) => `'${executionId}'`).join(',')}) GROUP BY 1`)
      .split('\n').map((line) => line.split('|'));
    console.log(`# runs per worker: ${claims.map(([, count]) => count).join(' + ')}`);
    assert.equal(claims.length, 2, `claims: ${JSON.stringify(claims)}`);
    assert.deepEqual(claims.map(([claimedBy]) => claimedBy).sort(), [...processes].sort());
    const files = podman(['exec', container('worker2'), 'sh', '-c', "find /data/backups/scale -type f ! -name '*.json' | wc -l"]).stdout.trim();
    assert.equal(Number(files), RUNS, 'each run wrote exactly one backup');
  });

  test('killing one worker mid-run leaves its run interrupted and the rest goes on', async () => {
    // pg_dump waits for this lock, so the runs are in flight when the worker is killed.
    const holder = spawn('podman', ['--runtime', 'runc', '--cgroup-manager=cgroupfs', 'exec', container('postgres'), 'psql', '-h', '/tmp', '-U', 'holdfast', '-d', 'fixture', '-c',
      'BEGIN; LOCK TABLE items IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(600);'], { env, stdio: 'ignore' });
    try {
      await sleep(1500);
      const queued = await Promise.all(jobs.slice(0, 6).map((job) => api.call('POST', `/api/jobs/${job.id}/run`)));
      const ids = queued.map(({ executionId }) => `'${executionId}'`).join(',');
      // The victim is the worker that holds a run (maxConcurrentJobs is 1 by default, for the whole cluster: one
      // run is in flight, on either worker).
      const victimId = await until('a run in flight', () => sql(`SELECT claimed_by FROM executions WHERE id IN (${ids}) AND status = 'Running' LIMIT 1`));
      const host = sql(`SELECT host FROM engine_processes WHERE id = '${victimId}'`);
      const victim = ['worker1', 'worker2'].find((service) => podman(['exec', container(service), 'hostname']).stdout.trim() === host);
      assert.ok(victim, `no worker container has the host name ${host}`);
      const killed = sql(`SELECT id FROM executions WHERE id IN (${ids}) AND status = 'Running' AND claimed_by = '${victimId}'`).split('\n');
      podman(['kill', container(victim)]);
      holder.kill();
      podman(['exec', container('postgres'), 'psql', '-h', '/tmp', '-U', 'holdfast', '-d', 'holdfast', '-qAtc',
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'fixture' AND query LIKE '%pg_sleep%'"]);
      const finished = await Promise.all(queued.map(({ executionId }) => api.waitForRun(executionId, 300_000)));
      for (const run of finished) {
        if (killed.includes(run.id)) {
          assert.equal(run.status, 'Failed', `run ${run.id} of the killed worker`);
          assert.match(JSON.stringify(run), /interrupted: the server process/);
        } else {
          assert.equal(run.status, 'Success', JSON.stringify(run.logs?.slice(-3)));
        }
      }
      console.log(`# killed worker: ${killed.length} run(s) interrupted, ${finished.length - killed.length} completed by the other worker`);
      assert.ok(finished.length - killed.length > 0, 'nothing went on after the kill');
    } finally {
      holder.kill();
    }
  });
});
