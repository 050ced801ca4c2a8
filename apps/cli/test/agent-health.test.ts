// Issue 48 scopes 1 and 4 (docs/agents.md "Agent health") with a real server process and a real `holdfast agent`:
// the agent's health report (its state directory's disk, load, memory, Node, the dump tools on this machine) shows in
// the API and is refreshed; a source bound to the agent gets an OFFLINE health entry naming it within seconds of the
// agent being killed, and an ONLINE one, checked through the agent, when it is started again.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnNode, type SpawnedProcess } from '@holdfast/tooling/harness/spawned-process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const SERVER_MAIN = fileURLToPath(new URL('../../server/dist/main.js', import.meta.url));
const CLI = fileURLToPath(new URL('../bin/holdfast.mjs', import.meta.url));
const ADMIN = { email: 'agent-health-admin@example.test', password: 'correct horse battery staple' };

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The first line of `<tool> --version` on this machine, as the agent reports it; undefined when it is not installed. */
function localVersion(tool: string): string | undefined {
  try {
    return execFileSync(tool, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).split('\n').find((line) => line.trim())?.trim();
  } catch {
    return undefined;
  }
}

describe('agent health with a real agent process', () => {
  let work: string;
  let server: SpawnedProcess | undefined;
  let port = 0;
  let key = '';
  const agents: SpawnedProcess[] = [];

  const url = () => `http://127.0.0.1:${port}`;
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${url()}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const startAgent = (stateDir: string, token?: string) => {
    const agent = spawnNode(CLI, ['agent', '--server', url(), '--state-dir', stateDir, ...(token ? ['--token', token] : []), '--max-backoff', '2'], {
      PATH: process.env.PATH,
      HOME: work,
      HOLDFAST_AGENT_HEALTH_SECONDS: '1',
    });
    agents.push(agent);
    return agent;
  };

  beforeAll(async () => {
    for (const file of [SERVER_MAIN, join(CLI, '../../dist/main.js')]) {
      if (!existsSync(file)) throw new Error(`${file} is missing: build first (npm run build)`);
    }
    work = await mkdtemp(join(tmpdir(), 'holdfast-agent-health-'));
    server = spawnNode(SERVER_MAIN, [], {
      PATH: process.env.PATH,
      PORT: '0',
      HOLDFAST_DATA_DIR: join(work, 'data'),
      HOLDFAST_ADMIN_EMAIL: ADMIN.email,
      HOLDFAST_ADMIN_PASSWORD: ADMIN.password,
      LOG_LEVEL: 'info',
    });
    port = Number((await server.waitForLog('holdfast listening', 60_000)).port);
    const signIn = await fetch(`${url()}/api/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
    expect(signIn.status).toBe(200);
    const { csrfToken } = (await signIn.json()) as { csrfToken: string };
    const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
    const issued = await fetch(`${url()}/api/api-keys`, {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': csrfToken, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'agent health test', permissions: ['agents:read', 'agents:write', 'sources:read', 'sources:write'] }),
    });
    expect(issued.status).toBe(201);
    key = ((await issued.json()) as { key: string }).key;
  }, 90_000);

  afterAll(async () => {
    for (const agent of agents) if (agent.child.exitCode === null && agent.child.signalCode === null) agent.child.kill('SIGKILL');
    if (server && server.child.exitCode === null) server.child.kill('SIGKILL');
    await rm(work, { recursive: true, force: true });
  });

  it('reports its health, and the health of a bound source follows the agent going away and coming back', async () => {
    const created = await call('POST', '/api/agents', { name: 'health-agent' });
    expect(created.status).toBe(201);
    const agentId = created.body.agent.id as string;
    const stateDir = join(work, 'state');
    await mkdir(stateDir, { mode: 0o700 });
    let agent = startAgent(stateDir, created.body.enrollmentToken);

    const first = await waitFor('online with health', async () => {
      const shown = (await call('GET', `/api/agents/${agentId}`)).body;
      return shown.status === 'online' && shown.health ? shown : undefined;
    }, 60_000);
    const health = first.health;
    expect(health.node).toBe(process.version);
    expect(health.cpus).toBeGreaterThan(0);
    expect(health.loadAverage).toHaveLength(3);
    expect(health.memory.totalBytes).toBeGreaterThan(health.memory.freeBytes);
    expect(health.memory.processRssBytes).toBeGreaterThan(10 * 2 ** 20);
    // The state directory's filesystem, as statfs reports it here (free space moves a little; within 1 GiB).
    const df = execFileSync('df', ['-k', '--output=size,avail', stateDir], { encoding: 'utf8' }).trim().split('\n').at(-1)!.trim().split(/\s+/).map((kib) => Number(kib) * 1024);
    expect(health.stateDisk.totalBytes).toBe(df[0]);
    expect(Math.abs(health.stateDisk.freeBytes - df[1]!)).toBeLessThan(2 ** 30);
    // The dump tools installed on this machine, with their own version line.
    for (const tool of ['pg_dump', 'mysqldump']) {
      const version = localVersion(tool);
      const reported = health.tools.find((entry: { name: string }) => entry.name === tool);
      if (version) expect(reported, tool).toEqual({ name: tool, version });
      else expect(reported, tool).toBeUndefined();
    }
    // Refreshed: the agent sends every second here (HOLDFAST_AGENT_HEALTH_SECONDS=1); the server writes every ping round (15 s).
    await waitFor('a newer report', async () => {
      const now = (await call('GET', `/api/agents/${agentId}`)).body.health;
      return Date.parse(now.reportedAt) > Date.parse(health.reportedAt) && now.uptimeSeconds > health.uptimeSeconds ? now : undefined;
    }, 40_000);

    // A folder source bound to the agent: checked through it at once when it connects again.
    const folder = join(work, 'folder');
    await mkdir(folder);
    await writeFile(join(folder, 'a.txt'), 'hello');
    const source = await call('POST', '/api/adapters', { name: 'agent folder', type: 'database', adapterId: 'directory', config: { paths: [folder] }, agentId });
    expect(source.status, JSON.stringify(source.body)).toBe(201);
    const historyOf = async () => (await call('GET', `/api/adapters/${source.body.id}/health`)).body.entries as Array<{ status: string; error: string | null; createdAt: string }>;

    agent.child.kill('SIGKILL');
    const killed = Date.now();
    const offline = await waitFor('OFFLINE entry', async () => {
      const [latest] = await historyOf();
      return latest?.status === 'OFFLINE' ? latest : undefined;
    }, 15_000);
    // Documented: within a few seconds of the drop (a killed process resets its connection at once).
    expect(Date.now() - killed).toBeLessThan(5_000);
    expect(offline.error).toBe('agent "health-agent" is offline');
    expect((await call('GET', `/api/adapters/${source.body.id}`)).body).toMatchObject({ lastStatus: 'OFFLINE', lastError: 'agent "health-agent" is offline' });
    expect((await call('GET', `/api/agents/${agentId}`)).body.status).toBe('offline');

    agent = startAgent(stateDir);
    const online = await waitFor('ONLINE entry', async () => {
      const [latest] = await historyOf();
      return latest?.status === 'ONLINE' ? latest : undefined;
    }, 30_000);
    expect(online.error).toBeNull();
    expect((await call('GET', `/api/adapters/${source.body.id}`)).body).toMatchObject({ lastStatus: 'ONLINE', lastError: null });
    // The check ran on the agent: its process logged the call.
    const calls = agent.stdoutLines.flatMap((line) => {
      try {
        return [JSON.parse(line) as { msg?: string; method?: string; adapter?: string }];
      } catch {
        return [];
      }
    });
    expect(calls).toContainEqual(expect.objectContaining({ msg: 'call started', method: 'check', adapter: 'directory' }));
  }, 150_000);
});
