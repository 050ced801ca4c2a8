// Issue 48, acceptance 2 (second half): the server process is SIGKILLed while a call streams on a real
// `holdfast agent`. The agent ends the call's adapter work at once (pg_dump's session is gone while the lock it waits
// for is still held: no orphan), reconnects with its backoff when the server is back on the same address, the run
// left Running is closed by the engine's crash recovery at start (`interrupted: ...`), and the next run succeeds
// with the adapter's log lines from the agent in its log.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnNode, type SpawnedProcess } from '@holdfast/tooling/harness/spawned-process';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI, lineAfter, psql, uniqueName } from './support/agent-harness.js';

const MAIN = fileURLToPath(new URL('../../server/dist/main.js', import.meta.url));
const ADMIN = { name: 'Admin', email: 'server-killed@example.test', password: 'correct horse battery staple' };

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

async function waitUntil(what: string, probe: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe('the server killed while a call streams on an agent', () => {
  const children: SpawnedProcess[] = [];
  let locker: ChildProcess | undefined;
  let work = '';
  const locked = uniqueName('hf_agent_killed_srv');

  afterAll(async () => {
    locker?.kill('SIGKILL');
    for (const child of children) if (child.child.exitCode === null && child.child.signalCode === null) child.child.kill('SIGKILL');
    await Promise.all(children.map((child) => child.exited));
    await psql(`DROP DATABASE IF EXISTS ${locked} WITH (FORCE)`).catch(() => undefined);
    if (work) await rm(work, { recursive: true, force: true });
  });

  it('ends pg_dump on the agent, reconnects when the server is back, closes the run as interrupted, and the next run succeeds', async () => {
    work = await mkdtemp(join(tmpdir(), 'holdfast-agent-server-killed-'));
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: '',
      HOLDFAST_DATA_DIR: join(work, 'data'),
      HOLDFAST_LOCAL_ROOTS: work,
      LOG_LEVEL: 'info',
      // The run after the restart may be claimed before the agent is back from its backoff.
      HOLDFAST_AGENT_WAIT_SECONDS: '30',
    };
    const startServer = async () => {
      const child = spawnNode(MAIN, [], env);
      children.push(child);
      await child.waitForLog('holdfast listening', 60_000);
      return child;
    };
    let server = await startServer();
    expect((await fetch(`${url}/api/auth/setup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) })).status).toBe(201);
    const signIn = await fetch(`${url}/api/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: ADMIN.email, password: ADMIN.password }) });
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const csrf = ((await signIn.json()) as { csrfToken: string }).csrfToken;
    const call = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
      const response = await fetch(`${url}${path}`, {
        method,
        headers: { cookie, 'x-csrf-token': csrf, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? JSON.parse(text) : null };
    };
    const created = await call('POST', '/api/agents', { name: 'outlives-the-server' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const agentId: string = created.body.agent.id;
    const stateDir = join(work, 'agent-state');
    await mkdir(stateDir, { mode: 0o700 });
    const agent = spawnNode(CLI, ['agent', '--server', url, '--state-dir', stateDir, '--max-backoff', '2', '--token', created.body.enrollmentToken], { PATH: process.env.PATH, HOME: work });
    children.push(agent);
    await lineAfter(agent, 0, 'connected', 60_000);
    await waitUntil('the agent online', async () => (await call('GET', `/api/agents/${agentId}`)).body.status === 'online');

    // pg_dump on the agent blocks on a table another session holds locked, so the call is in flight when the kill comes.
    await psql(`CREATE DATABASE ${locked}`);
    await psql(`CREATE TABLE held (id int); INSERT INTO held SELECT generate_series(1, 100)`, locked);
    const lockerName = `hf-agent-killed-srv-${process.pid}`;
    locker = spawn('psql', ['-X', '-h', '127.0.0.1', '-U', 'root', '-d', locked, '-c', 'BEGIN; LOCK TABLE held IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(300);'], {
      stdio: 'ignore',
      env: { ...process.env, PGAPPNAME: lockerName },
    });
    await waitUntil('the lock to be held', async () => Number(await psql(`SELECT count(*) FROM pg_stat_activity WHERE application_name = '${lockerName}' AND state = 'active'`)) > 0);
    const waitingDumps = async () => Number(await psql(`SELECT count(*) FROM pg_stat_activity WHERE datname = '${locked}' AND wait_event_type = 'Lock'`));

    const source = await call('POST', '/api/adapters', { name: 'pg via agent', type: 'database', adapterId: 'postgres', config: { user: 'root', host: '127.0.0.1' }, agentId });
    expect(source.status, JSON.stringify(source.body)).toBe(201);
    await mkdir(join(work, 'backups'));
    const local = await call('POST', '/api/adapters', { name: 'local', type: 'storage', adapterId: 'local', config: { path: join(work, 'backups') } });
    expect(local.status, JSON.stringify(local.body)).toBe(201);
    const job = await call('POST', '/api/jobs', { name: 'killed server job', schedule: '0 3 * * *', sourceId: source.body.id, databases: [locked], compression: 'GZIP', destinations: [{ configId: local.body.id, priority: 0 }] });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    const queued = await call('POST', `/api/jobs/${job.body.id}/run`, {});
    expect(queued.status, JSON.stringify(queued.body)).toBe(200);
    const interruptedId: string = queued.body.executionId;
    await waitUntil('pg_dump to wait for the lock', async () => (await waitingDumps()) > 0, 60_000);

    const beforeKill = agent.stdoutLines.length;
    const killedAt = Date.now();
    server.child.kill('SIGKILL');
    await server.exited;
    // The agent notices the reset connection, aborts the call, and pg_dump ends while the lock is still held.
    await lineAfter(agent, beforeKill, 'call failed', 15_000, (line) => line.method === 'dump');
    await waitUntil('pg_dump to end on the agent', async () => (await waitingDumps()) === 0, 15_000);
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    expect(Number(await psql(`SELECT count(*) FROM pg_stat_activity WHERE application_name = '${lockerName}' AND state = 'active'`))).toBe(1);
    await psql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '${lockerName}'`);

    // The server comes back on the same address: the run it left Running is closed at start, the agent reconnects.
    server = await startServer();
    await lineAfter(agent, beforeKill, 'connected', 30_000);
    await waitUntil('the agent online again', async () => (await call('GET', `/api/agents/${agentId}`)).body.status === 'online');
    const interrupted = (await call('GET', `/api/executions/${interruptedId}`)).body.data;
    expect(interrupted.status).toBe('Failed');
    expect(interrupted.error).toMatch(/^interrupted: the server stopped while this run was in progress/);

    const next = await call('POST', `/api/jobs/${job.body.id}/run`, {});
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    let settled: any;
    await waitUntil(
      'the next run to finish',
      async () => {
        settled = (await call('GET', `/api/executions/${next.body.executionId}?includeLogs=true`)).body.data;
        return !['Pending', 'Running'].includes(settled.status);
      },
      60_000,
    );
    expect(settled.status, JSON.stringify(settled.logs?.slice(-6))).toBe('Success');
    // The adapter's own log lines on the agent are in the run's log (forwarded as `log` frames).
    const messages: string[] = settled.logs.map((entry: { message: string }) => entry.message);
    expect(messages.some((message) => /^agent: starting pg_dump/.test(message)), messages.join('\n')).toBe(true);
  }, 120_000);
});
