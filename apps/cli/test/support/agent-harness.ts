// Shared by the tests that run sources through a real `holdfast agent` process (issue 48, part 2): the assembled
// server in this process, calls with the admin's session, agents spawned from bin/holdfast.mjs, and PostgreSQL
// helpers (psql against the shared test server, or against any host/port given).
import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { startServer, type ServerHandle } from '@holdfast/server';
import { spawnNode, type SpawnedProcess } from '@holdfast/tooling/harness/spawned-process';

export const run = promisify(execFile);
export const CLI = fileURLToPath(new URL('../../bin/holdfast.mjs', import.meta.url));
const ADMIN = { email: 'agent-runs@example.test', password: 'correct horse battery staple' };

export interface Answer {
  status: number;
  body: any;
}

export interface AgentTestServer {
  url: string;
  handle: ServerHandle;
  work: string;
  call(method: string, path: string, body?: unknown): Promise<Answer>;
  /** Creates an agent and starts `holdfast agent` enrolled with its token; resolves once it is online. */
  startAgent(name: string, options?: { wrap?: string[]; server?: string }): Promise<TestAgent>;
  /** Polls an execution until it leaves Pending/Running. */
  settled(executionId: string, timeoutMs?: number): Promise<any>;
  close(): Promise<void>;
}

export interface TestAgent {
  id: string;
  name: string;
  stateDir: string;
  process: SpawnedProcess;
  /** Starts the agent process again with the same state directory (it authenticates with its key). */
  restart(): Promise<void>;
}

/** The first JSON log line at or after `from` whose msg is `msg` and that `match` accepts. */
export async function lineAfter(agent: SpawnedProcess, from: number, msg: string, timeoutMs = 30_000, match: (line: any) => boolean = () => true): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    for (let index = from; index < agent.stdoutLines.length; index += 1) {
      try {
        const line = JSON.parse(agent.stdoutLines[index]!);
        if (line.msg === msg && match(line)) return { ...line, index };
      } catch {
        // not a log line
      }
    }
    if (Date.now() > deadline) throw new Error(`no "${msg}" line within ${timeoutMs} ms:\n${agent.stdoutLines.slice(from).join('\n')}\n${agent.stderr()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The assembled server (libsql) listening on `host`, local destinations allowed under its work directory. */
export async function startAgentTestServer(options: { host?: string; env?: Record<string, string> } = {}): Promise<AgentTestServer> {
  const work = await mkdtemp(join(tmpdir(), 'holdfast-agent-runs-'));
  const handle = await startServer({
    env: { PORT: '0', HOLDFAST_DATA_DIR: join(work, 'data'), DATABASE_URL: '', LOG_LEVEL: 'silent', HOLDFAST_LOCAL_ROOTS: work, ...options.env },
    host: options.host ?? '127.0.0.1',
  });
  const port = new URL(handle.url).port;
  const url = `http://127.0.0.1:${port}`;
  const setup = await fetch(`${url}/api/auth/setup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Admin', ...ADMIN }) });
  if (setup.status !== 201) throw new Error(`setup failed: ${setup.status} ${await setup.text()}`);
  const signIn = await fetch(`${url}/api/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
  const { csrfToken } = (await signIn.json()) as { csrfToken: string };
  const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
  const agents: SpawnedProcess[] = [];
  const call = async (method: string, path: string, body?: unknown): Promise<Answer> => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { cookie, 'x-csrf-token': csrfToken, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : null };
  };
  const spawnAgent = (stateDir: string, token: string | undefined, wrap: string[] | undefined, serverUrl: string) => {
    const args = ['agent', '--server', serverUrl, '--state-dir', stateDir, '--max-backoff', '2', ...(token ? ['--token', token] : [])];
    const env = { PATH: process.env.PATH, HOME: work };
    // Wrapped (ip netns exec ...): the wrapper runs node with the CLI.
    const spawned = wrap ? spawnWrapped(wrap, [process.execPath, CLI, ...args], env) : spawnNode(CLI, args, env);
    agents.push(spawned);
    return spawned;
  };
  const server: AgentTestServer = {
    url,
    handle,
    work,
    call,
    async startAgent(name, agentOptions = {}) {
      const created = await call('POST', '/api/agents', { name });
      if (created.status !== 201) throw new Error(`agent not created: ${JSON.stringify(created.body)}`);
      const stateDir = join(work, `state-${name}`);
      await mkdir(stateDir, { mode: 0o700 });
      const serverUrl = agentOptions.server ?? url;
      const agent: TestAgent = {
        id: created.body.agent.id,
        name,
        stateDir,
        process: spawnAgent(stateDir, created.body.enrollmentToken, agentOptions.wrap, serverUrl),
        async restart() {
          agent.process = spawnAgent(stateDir, undefined, agentOptions.wrap, serverUrl);
          await lineAfter(agent.process, 0, 'connected', 60_000);
          await waitOnline(agent.id);
        },
      };
      await lineAfter(agent.process, 0, 'connected', 60_000);
      await waitOnline(agent.id);
      return agent;
    },
    async settled(executionId, timeoutMs = 120_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const answer = await call('GET', `/api/executions/${executionId}?includeLogs=true`);
        if (!['Pending', 'Running'].includes(answer.body.data.status)) return answer.body.data;
        if (Date.now() > deadline) throw new Error(`execution ${executionId} still ${answer.body.data.status}`);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    },
    async close() {
      // SIGTERM first: a wrapped agent's wrapper passes it on (SIGKILL would leave the child running).
      const running = agents.filter((agent) => agent.child.exitCode === null && agent.child.signalCode === null);
      for (const agent of running) agent.child.kill('SIGTERM');
      await Promise.race([Promise.all(running.map((agent) => agent.exited)), new Promise((resolve) => setTimeout(resolve, 5_000))]);
      for (const agent of running) if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL');
      await handle.close();
      await rm(work, { recursive: true, force: true });
    },
  };
  // Polling and many creations in one suite exceed the default limits; the limiter re-reads settings within 5 s.
  const lifted = await call('PUT', '/api/settings', { authPoints: 10_000, apiPoints: 100_000, mutationPoints: 100_000 });
  if (lifted.status !== 200) throw new Error(`could not lift rate limits: ${JSON.stringify(lifted.body)}`);
  await new Promise((resolve) => setTimeout(resolve, 5_500));
  async function waitOnline(agentId: string): Promise<void> {
    const deadline = Date.now() + 30_000;
    while ((await call('GET', `/api/agents/${agentId}`)).body.status !== 'online') {
      if (Date.now() > deadline) throw new Error(`agent ${agentId} not online in time`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return server;
}

/** Like spawnNode, for a wrapper command (`ip netns exec <ns> node ...`). */
function spawnWrapped(wrap: string[], command: string[], env: NodeJS.ProcessEnv): SpawnedProcess {
  // spawnNode runs `node <script>`: a tiny script that execs the wrapper keeps its output handling.
  return spawnNode(fileURLToPath(new URL('./exec-wrapped.mjs', import.meta.url)), [...wrap, ...command], env);
}

/** psql with the given connection (default: the shared test server as root), returning its unaligned output. */
export async function psql(sql: string, database = 'postgres', connection: { host: string; port?: number; user?: string } = { host: '127.0.0.1' }): Promise<string> {
  const { stdout } = await run('psql', ['-X', '-v', 'ON_ERROR_STOP=1', '-h', connection.host, '-p', String(connection.port ?? 5432), '-U', connection.user ?? 'root', '-d', database, '-tAc', sql], {
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout.trim();
}

/** A digest of every row of `table` in a stable order: two databases with equal rows have equal digests. */
export const tableDigestSql = (table: string) => `SELECT count(*) || ':' || md5(string_agg(t::text, '|' ORDER BY t::text)) FROM ${table} t`;

export const uniqueName = (prefix: string) => `${prefix}_${process.pid}_${Date.now().toString(36)}`;
