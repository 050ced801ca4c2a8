// Issue 48 scopes 1 and 4 (docs/agents.md "Agent health"): the agent's health report (hello and `health` frames,
// stored, answered by the API, hostile reports refused) and the health of sources bound to an agent when it drops and
// comes back, with scripted agents (support/agent-client.ts) on libsql and PostgreSQL. The real `holdfast agent`
// process is tested in apps/cli/test/agent-health.test.ts.
import { AGENTS } from '@holdfast/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handshake, isClosed, newAgentKey, type Closed, type TestConnection } from './support/agent-client.js';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const HEALTH = {
  uptimeSeconds: 12,
  hostUptimeSeconds: 86_400,
  loadAverage: [0.5, 0.25, 0.1],
  cpus: 4,
  memory: { totalBytes: 8 * 2 ** 30, freeBytes: 2 * 2 ** 30, processRssBytes: 80 * 2 ** 20 },
  stateDisk: { totalBytes: 100 * 2 ** 30, freeBytes: 40 * 2 ** 30 },
  node: 'v20.19.0',
  platform: 'linux x64',
  tools: [{ name: 'pg_dump', version: 'pg_dump (PostgreSQL) 16.4' }],
};

describe.each(['sqlite', 'postgresql'] as const)('agent health on %s', (dialect) => {
  let server: FullServer;
  let admin: Caller;
  const sockets: TestConnection[] = [];

  beforeAll(async () => {
    server = await startFullServer(dialect);
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
  }, 120_000);

  afterAll(async () => {
    for (const connection of sockets) connection.socket.terminate();
    await server?.close();
  });

  const newAgent = async (name: string) => {
    const created = await server.call('POST', '/api/agents', admin, { name });
    expect(created.status).toBe(201);
    return created.body as { agent: { id: string; name: string }; enrollmentToken: string };
  };
  const connect = async (claim: { token: string } | { agentId: string }, key = newAgentKey(), hello: Record<string, unknown> = {}) => {
    const result = await handshake(server.url, key, claim, { version: '9.9.9-test', host: 'scripted', adapters: ['@holdfast/source-postgres'], ...hello } as never);
    if (isClosed(result)) throw new Error(`refused: ${result.code} ${result.reason}`);
    sockets.push(result.connection);
    return result.connection;
  };
  const agentOf = async (id: string) => (await server.call('GET', `/api/agents/${id}`, admin)).body as Record<string, any>;
  const waitStatus = (id: string, status: string) => waitFor(`agent ${status}`, async () => ((await agentOf(id)).status === status ? true : undefined));
  const flushHealth = () => server.handle.container.resolve(AGENTS).endpoint.flushHealth();

  it('stores the health of the hello and of later health frames, answers it in the list and the agent, and lists the feature in the welcome', async () => {
    const { agent, enrollmentToken } = await newAgent('healthy-agent');
    const before = Date.now();
    const connection = await connect({ token: enrollmentToken }, newAgentKey(), { health: HEALTH });
    // A report right behind the hello, while the server may still be recording the hello, is dropped, not an error.
    connection.send({ type: 'health', health: { ...HEALTH, uptimeSeconds: 13 } });
    await waitStatus(agent.id, 'online');
    const shown = await agentOf(agent.id);
    // The hello's report (or the one right behind it, had it arrived after the hello was recorded and a round passed).
    expect(shown.health).toMatchObject({ ...HEALTH, uptimeSeconds: expect.any(Number) });
    expect([12, 13]).toContain(shown.health.uptimeSeconds);
    expect(Date.parse(shown.health.reportedAt)).toBeGreaterThanOrEqual(before - 1000);
    const listed = (await server.call('GET', '/api/agents', admin)).body.agents.find((row: { id: string }) => row.id === agent.id);
    expect(listed.health).toEqual(shown.health);

    // A later report is kept in memory and written by the heartbeat round (one statement for every agent).
    const later = { ...HEALTH, uptimeSeconds: 72, stateDisk: { totalBytes: 100 * 2 ** 30, freeBytes: 39 * 2 ** 30 } };
    connection.send({ type: 'health', health: { ...later, uptimeSeconds: 70 } });
    connection.send({ type: 'health', health: later });
    await waitFor('both frames received', async () => {
      await flushHealth();
      return (await agentOf(agent.id)).health.uptimeSeconds === 72 ? true : undefined;
    });
    expect((await agentOf(agent.id)).health).toMatchObject(later);
    expect(connection.socket.readyState).toBe(connection.socket.OPEN);
  });

  it('shows no health for an agent that sends none (an older agent), and clears a previous report then', async () => {
    const { agent, enrollmentToken } = await newAgent('older-agent');
    const key = newAgentKey();
    const first = await connect({ token: enrollmentToken }, key, { health: HEALTH });
    await waitStatus(agent.id, 'online');
    expect((await agentOf(agent.id)).health).not.toBeNull();
    first.socket.close();
    await waitStatus(agent.id, 'offline');
    // The last report stays while it is offline (what it looked like when it went).
    expect((await agentOf(agent.id)).health).toMatchObject(HEALTH);
    await connect({ agentId: agent.id }, key);
    await waitFor('online without health', async () => {
      const now = await agentOf(agent.id);
      return now.status === 'online' && now.health === null ? true : undefined;
    });
  });

  it('closes an agent sending a malformed or oversized health report with 4000 naming it, and keeps the last good report', async () => {
    const { agent, enrollmentToken } = await newAgent('hostile-health-agent');
    const key = newAgentKey();
    await connect({ token: enrollmentToken }, key, { health: HEALTH });
    await waitStatus(agent.id, 'online');
    const hostile: Array<{ what: string; frame: unknown; reason: RegExp }> = [
      { what: 'an unknown field', frame: { type: 'health', health: { ...HEALTH, extra: 1 } }, reason: /health frame.*Unrecognized key/i },
      { what: 'a negative number', frame: { type: 'health', health: { ...HEALTH, cpus: -1 } }, reason: /health\.cpus/ },
      { what: 'a missing field', frame: { type: 'health', health: { ...HEALTH, node: undefined } }, reason: /health\.node/ },
      { what: 'a tool with a path for a name', frame: { type: 'health', health: { ...HEALTH, tools: [{ name: '../../bin/sh', version: 'x' }] } }, reason: /health\.tools\.0\.name/ },
      { what: 'too many tools', frame: { type: 'health', health: { ...HEALTH, tools: Array.from({ length: 17 }, () => ({ name: 'x', version: 'y' })) } }, reason: /health\.tools/ },
      { what: 'a frame over 4 KiB', frame: { type: 'health', health: { ...HEALTH, platform: 'x'.repeat(5000) } }, reason: /health frame too large/ },
      { what: 'a huge frame', frame: { type: 'health', health: { ...HEALTH, platform: 'x'.repeat(300_000) } }, reason: /.*/ },
    ];
    for (const { what, frame, reason } of hostile) {
      const connection = await connect({ agentId: agent.id }, key, { health: HEALTH });
      await waitStatus(agent.id, 'online');
      connection.send(frame);
      const closed = (await connection.closed) as Closed;
      if (what === 'a huge frame') expect(closed.code, what).toBe(1009);
      else {
        expect(closed.code, what).toBe(4000);
        expect(closed.reason, what).toMatch(reason);
      }
      await waitStatus(agent.id, 'offline');
    }
    await flushHealth();
    expect((await agentOf(agent.id)).health).toMatchObject(HEALTH);

    // A malformed health in the hello is refused like every bad hello.
    const badHello = await handshake(server.url, key, { agentId: agent.id }, { version: '1', host: 'h', adapters: [], health: { ...HEALTH, memory: 'lots' } } as never);
    expect(isClosed(badHello)).toBe(false);
    if (isClosed(badHello)) return;
    const closed = await badHello.connection.closed;
    expect(closed.code).toBe(4000);
    expect(closed.reason).toContain('health.memory');
  });

  it('records OFFLINE in the health of every source bound to an agent when it drops, and checks them through it when it comes back', async () => {
    const { agent, enrollmentToken } = await newAgent('presence-agent');
    const key = newAgentKey();
    const bound = [];
    for (const name of ['presence db 1', 'presence db 2']) {
      const created = await server.call('POST', '/api/adapters', admin, { name, type: 'database', adapterId: 'postgres', config: { user: 'root', host: '10.99.0.2', password: 'x' }, agentId: agent.id });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      bound.push(created.body.id as string);
    }
    const unbound = await server.call('POST', '/api/adapters', admin, { name: 'server db', type: 'database', adapterId: 'postgres', config: { user: 'root', host: '127.0.0.1' } });
    const historyOf = async (id: string) => (await server.call('GET', `/api/adapters/${id}/health`, admin)).body.entries as Array<{ status: string; error: string | null }>;

    // First connection (agent_online): each bound source is checked through the agent.
    const answerChecks = async (connection: TestConnection, count: number) => {
      const seen: string[] = [];
      while (seen.length < count) {
        const frame = (await connection.next(15_000)) as Record<string, any>;
        if (frame.type !== 'call') continue;
        seen.push(frame.method);
        if (frame.method === 'check') connection.send({ type: 'result', id: frame.id, value: { ok: true, message: 'answered by the agent', latencyMs: 2 } });
        else if (frame.method === 'detectVersion') connection.send({ type: 'result', id: frame.id, value: { version: '16.4', edition: 'PostgreSQL' } });
        else connection.send({ type: 'error', id: frame.id, message: 'not in this test' });
      }
      return seen;
    };
    let connection = await connect({ token: enrollmentToken }, key);
    expect((await answerChecks(connection, 4)).filter((method) => method === 'check')).toHaveLength(2);
    for (const id of bound) {
      const entries = await waitFor('ONLINE entry', async () => ((await historyOf(id)).length > 0 ? historyOf(id) : undefined));
      expect(entries[0]).toMatchObject({ status: 'ONLINE', error: null });
    }

    // The agent drops: every bound source gets OFFLINE at once, naming the agent; the server's own source nothing.
    const dropped = Date.now();
    connection.socket.terminate();
    for (const id of bound) {
      const entry = await waitFor('OFFLINE entry', async () => {
        const [latest] = await historyOf(id);
        return latest?.status === 'OFFLINE' ? latest : undefined;
      });
      expect(entry.error).toBe('agent "presence-agent" is offline');
      const state = (await server.call('GET', `/api/adapters/${id}`, admin)).body;
      expect(state).toMatchObject({ lastStatus: 'OFFLINE', lastError: 'agent "presence-agent" is offline' });
      expect(state.lastHealthCheck).not.toBeNull();
    }
    expect(Date.now() - dropped).toBeLessThan(5_000);
    expect(await historyOf(unbound.body.id)).toHaveLength(0);

    // HEALTH_CHECK while it is offline: OFFLINE at once (no wait for the agent), not DEGRADED after one failure.
    const run = await server.call('POST', '/api/settings/system-tasks/HEALTH_CHECK/run', admin);
    expect(run.status).toBe(202);
    await waitFor('HEALTH_CHECK done', async () => {
      const runs = (await server.call('GET', '/api/settings/system-tasks/runs?task=HEALTH_CHECK', admin)).body.runs as Array<{ id: string; status: string }>;
      return runs.find((row) => row.id === run.body.id && row.status !== 'Running');
    }, 20_000);
    for (const id of bound) {
      const [latest, previous] = await historyOf(id);
      expect(latest).toMatchObject({ status: 'OFFLINE', error: 'agent "presence-agent" is offline' });
      expect(previous?.status).toBe('OFFLINE');
    }

    // It comes back: checked through it again, ONLINE.
    connection = await connect({ agentId: agent.id }, key);
    expect((await answerChecks(connection, 4)).filter((method) => method === 'check')).toHaveLength(2);
    for (const id of bound) {
      await waitFor('ONLINE again', async () => ((await historyOf(id))[0]?.status === 'ONLINE' ? true : undefined));
      expect((await server.call('GET', `/api/adapters/${id}`, admin)).body).toMatchObject({ lastStatus: 'ONLINE', lastError: null });
    }
  });
});
