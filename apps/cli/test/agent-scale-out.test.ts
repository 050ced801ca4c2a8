// Issue 48, scope 5: several server processes on one PostgreSQL, with a real `holdfast agent` connected to one of
// them (B). Backups queued through the other (A) still run on the agent: whichever process claims a run hands it
// over to the process holding the agent's connection (executions.claimed_by is B's engine for every run, and for a
// restore into the source its backup's sidecar records). A disable
// and a revoke through A close the agent's connection on B within the 2 s control poll (4003; the revoked agent stops
// with 11), and a restart of A leaves the agent held by B online (presence rows name their holding process; only stale ones are cleared).
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnNode, type SpawnedProcess } from '@holdfast/tooling/harness/spawned-process';
import { createThrowawayPostgres, type ThrowawayDatabase } from '@holdfast/tooling/harness/test-site';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, lineAfter } from './support/agent-harness.js';

const MAIN = fileURLToPath(new URL('../../server/dist/main.js', import.meta.url));
const ADMIN = { name: 'Admin', email: 'scale-out-agent@example.test', password: 'correct horse battery staple' };
const RUNS = 4;

interface Server {
  process: SpawnedProcess;
  url: string;
  engineId: string;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('an agent connected to one of several server processes on PostgreSQL', () => {
  let postgres: ThrowawayDatabase | undefined;
  let db: pg.Pool | undefined;
  const children: SpawnedProcess[] = [];
  let work = '';

  afterAll(async () => {
    for (const child of children) if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
    await Promise.all(children.map((child) => child.exited));
    await db?.end();
    await postgres?.drop();
    if (work) await rm(work, { recursive: true, force: true });
  });

  async function start(env: NodeJS.ProcessEnv, name: string): Promise<Server> {
    const dataDir = join(work, `data-${name}-${Date.now()}`);
    await mkdir(dataDir);
    const child = spawnNode(MAIN, [], { ...env, HOLDFAST_DATA_DIR: dataDir });
    children.push(child);
    const listening = (await child.waitForLog('holdfast listening', 60_000)) as unknown as { port: number };
    const engine = (await child.waitForLog('engine started', 10_000)) as unknown as { processId: string };
    return { process: child, url: `http://127.0.0.1:${listening.port}`, engineId: engine.processId };
  }

  it('runs queued through A on the agent held by B, survives a restart of A, and disables and revokes through A', async () => {
    work = await mkdtemp(join(tmpdir(), 'holdfast-agent-scale-out-'));
    postgres = await createThrowawayPostgres();
    db = new pg.Pool({ connectionString: postgres.url, max: 2 });
    db.on('error', () => undefined);
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      PORT: '0',
      DATABASE_URL: postgres.url,
      HOLDFAST_ENCRYPTION_KEY: randomBytes(32).toString('hex'),
      HOLDFAST_LOCAL_ROOTS: work,
      LOG_LEVEL: 'info',
      HOLDFAST_ENGINE_POLL_MS: '500',
      HOLDFAST_ENGINE_HEARTBEAT_MS: '300',
      HOLDFAST_ENGINE_STALE_MS: '3000',
      HOLDFAST_ENGINE_SHUTDOWN_GRACE_MS: '1000',
      // A run claimed by a process that does not hold the agent would fail after this wait: the test would see it.
      HOLDFAST_AGENT_WAIT_SECONDS: '2',
    };
    let a = await start(env, 'a');
    expect((await fetch(`${a.url}/api/auth/setup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })).status).toBe(201);
    const signIn = await fetch(`${a.url}/api/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: ADMIN.email, password: ADMIN.password }) });
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const csrf = ((await signIn.json()) as { csrfToken: string }).csrfToken;
    const call = async (server: Server, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
      const response = await fetch(`${server.url}${path}`, {
        method,
        headers: { cookie, 'x-csrf-token': csrf, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : null };
    };
    expect((await call(a, 'PUT', '/api/settings', { maxConcurrentJobs: 2, authPoints: 10_000, apiPoints: 100_000, mutationPoints: 100_000 })).status).toBe(200);
    const b = await start(env, 'b');

    // The agent connects to B only.
    const created = await call(a, 'POST', '/api/agents', { name: 'held-by-b' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const agentId: string = created.body.agent.id;
    const stateDir = join(work, 'agent-state');
    await mkdir(stateDir, { mode: 0o700 });
    const agent = spawnNode(CLI, ['agent', '--server', b.url, '--state-dir', stateDir, '--max-backoff', '2', '--token', created.body.enrollmentToken], { PATH: process.env.PATH, HOME: work });
    children.push(agent);
    await lineAfter(agent, 0, 'connected', 60_000);
    const waitStatus = async (server: Server, status: string) => {
      const deadline = Date.now() + 20_000;
      while ((await call(server, 'GET', `/api/agents/${agentId}`)).body.status !== status) {
        if (Date.now() > deadline) throw new Error(`agent not ${status} through ${server.url}`);
        await sleep(100);
      }
    };
    await waitStatus(a, 'online');
    const [holder] = (await db.query('SELECT holder_id FROM agents WHERE id = $1', [agentId])).rows as Array<{ holder_id: string }>;
    expect(holder?.holder_id).toBe(b.engineId);

    // A folder on the agent's side, backed up RUNS times, every run queued through A.
    const folder = join(work, 'agent-folder');
    await mkdir(folder);
    await writeFile(join(folder, 'data.bin'), randomBytes(512 * 1024));
    const destination = join(work, 'backups');
    await mkdir(destination);
    const source = await call(a, 'POST', '/api/adapters', { name: 'folder on agent', type: 'database', adapterId: 'directory', config: { paths: [folder] }, agentId });
    expect(source.status, JSON.stringify(source.body)).toBe(201);
    const local = await call(a, 'POST', '/api/adapters', { name: 'local', type: 'storage', adapterId: 'local', config: { path: destination } });
    expect(local.status, JSON.stringify(local.body)).toBe(201);
    const job = await call(a, 'POST', '/api/jobs', { name: 'agent job', schedule: '0 3 * * *', sourceId: source.body.id, databases: [], compression: 'NONE', destinations: [{ configId: local.body.id, priority: 0 }] });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    const ids: string[] = [];
    for (let index = 0; index < RUNS; index += 1) {
      const queued = await call(a, 'POST', `/api/jobs/${job.body.id}/run`, {});
      expect(queued.status, JSON.stringify(queued.body)).toBe(200);
      ids.push(queued.body.executionId);
    }
    const deadline = Date.now() + 90_000;
    let finished: Array<{ id: string; status: string; error: string | null; claimed_by: string }> = [];
    for (;;) {
      finished = (await db.query(`SELECT id, status, error, claimed_by FROM executions WHERE id = ANY($1) AND status NOT IN ('Pending', 'Running')`, [ids])).rows;
      if (finished.length === RUNS || Date.now() > deadline) break;
      await sleep(300);
    }
    expect(finished.map((row) => [row.status, row.error])).toEqual(ids.map(() => ['Success', null]));
    // Every run executed on B, the holder; the agent made one dump per run.
    expect(new Set(finished.map((row) => row.claimed_by))).toEqual(new Set([b.engineId]));
    const dumps = agent.stdoutLines.filter((line) => line.includes('"call started"') && line.includes('"method":"dump"')).length;
    expect(dumps).toBe(RUNS);
    expect((await readdir(destination)).filter((name) => !name.endsWith('.meta.json'))).toHaveLength(RUNS);
    const handedOver = a.process.stdoutLines.filter((line) => line.includes('run handed over to the process holding its agent')).length;
    console.info(`runs claimed first by A and handed over to B: ${handedOver} of ${RUNS}`);

    // A restore queued through A without targetSourceId goes to the source its sidecar records: run on B too.
    const file = (await readdir(destination)).find((name) => !name.endsWith('.meta.json'))!;
    const restoredPath = join(work, 'restored');
    const restore = await call(a, 'POST', `/api/storage/${local.body.id}/restore`, { file, targetPath: restoredPath });
    expect(restore.status, JSON.stringify(restore.body)).toBe(200);
    let restored: { status: string; error: string | null; claimed_by: string } | undefined;
    for (const until = Date.now() + 60_000; Date.now() < until; await sleep(300)) {
      [restored] = (await db.query(`SELECT status, error, claimed_by FROM executions WHERE id = $1 AND status NOT IN ('Pending', 'Running')`, [restore.body.executionId])).rows;
      if (restored) break;
    }
    expect(restored).toEqual({ status: 'Success', error: null, claimed_by: b.engineId });
    expect((await readdir(restoredPath, { recursive: true })).some((name) => name.endsWith('data.bin'))).toBe(true);

    // A restarts: the agent held by B stays online (only stale presence is cleared at start).
    a.process.child.kill('SIGTERM');
    await a.process.exited;
    a = await start(env, 'a2');
    expect((await call(a, 'GET', `/api/agents/${agentId}`)).body.status).toBe('online');
    expect((await call(b, 'GET', `/api/agents/${agentId}`)).body.status).toBe('online');

    // Disabled through A: B closes the connection with 4003 (control poll) and refuses it until enabled through A.
    const beforeDisable = agent.stdoutLines.length;
    expect((await call(a, 'PATCH', `/api/agents/${agentId}`, { enabled: false })).status).toBe(200);
    await lineAfter(agent, beforeDisable, 'disconnected; reconnecting', 10_000, (line) => line.code === 4003);
    await waitStatus(b, 'offline');
    expect((await call(a, 'PATCH', `/api/agents/${agentId}`, { enabled: true })).status).toBe(200);
    await lineAfter(agent, beforeDisable, 'connected', 20_000);
    await waitStatus(a, 'online');

    // Revoked through A: B closes the agent's connection (control poll, 2 s) and the agent stops for good.
    const revokedAt = Date.now();
    expect((await call(a, 'DELETE', `/api/agents/${agentId}`)).status).toBe(200);
    const exit = await Promise.race([agent.exited, sleep(15_000).then(() => null)]);
    expect(exit, 'the agent did not stop after the revoke').toMatchObject({ code: 11 });
    expect(Date.now() - revokedAt).toBeLessThan(10_000);
    await waitStatus(b, 'revoked');
  }, 180_000);
});
