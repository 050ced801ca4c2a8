// Issue 48 (scope 5), the small version of `npm run bench:agents` (tooling/bench/agents-scale.mjs, 500 agents, in
// docs/benchmarks.md): 50 scripted agents doing the real enroll + Ed25519 handshake stay connected to one server while
// the API answers, a run-style call reaches one of them, and the heartbeat's presence write covers every connected
// agent in one batch (one statement per round instead of one per agent, which stalled the API at 500 agents).
import { AGENTS } from '@holdfast/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handshake, isClosed, newAgentKey, type TestConnection } from './support/agent-client.js';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

const AGENT_COUNT = 50;

describe(`${AGENT_COUNT} connected agents`, () => {
  let server: FullServer;
  let admin: Caller;
  const connections: Array<{ id: string; connection: TestConnection }> = [];

  beforeAll(async () => {
    server = await startFullServer('sqlite');
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    const stamp = Date.now();
    const created: Array<{ id: string; token: string }> = [];
    for (let i = 0; i < AGENT_COUNT; i++) {
      const answer = await server.call('POST', '/api/agents', admin, { name: `scale-${stamp}-${i}` });
      expect(answer.status).toBe(201);
      created.push({ id: (answer.body as any).agent.id, token: (answer.body as any).enrollmentToken });
    }
    // Ten handshakes at a time, as agents returning after a server restart would arrive.
    for (let start = 0; start < created.length; start += 10) {
      await Promise.all(
        created.slice(start, start + 10).map(async (agent) => {
          const result = await handshake(server.url, newAgentKey(), { token: agent.token });
          if (isClosed(result)) throw new Error(`agent refused: ${result.code} ${result.reason}`);
          connections.push({ id: agent.id, connection: result.connection });
        }),
      );
    }
  }, 120_000);

  afterAll(async () => {
    for (const { connection } of connections) connection.socket.terminate();
    await server?.close();
  });

  it('every agent shows online and the API stays responsive while they are connected', async () => {
    await expect
      .poll(async () => ((await server.call('GET', '/api/agents', admin)).body as any).agents.filter((agent: { status: string }) => agent.status === 'online').length, { timeout: 15_000 })
      .toBe(AGENT_COUNT);
    const times: number[] = [];
    for (let i = 0; i < 100; i++) {
      const started = performance.now();
      const answer = await server.call('GET', '/api/jobs', admin);
      times.push(performance.now() - started);
      expect(answer.status).toBe(200);
    }
    times.sort((a, b) => a - b);
    // Generous: the bound catches a stall (seconds), not the ordinary noise of a shared 2-core machine.
    expect(times[98], `p99 of GET /api/jobs: ${times[98]} ms`).toBeLessThan(1_500);
  }, 60_000);

  it('a call reaches the one agent its source is bound to', async () => {
    const target = connections[Math.floor(AGENT_COUNT / 2)]!;
    const source = await server.call('POST', '/api/adapters', admin, {
      name: `bound-${Date.now()}`,
      type: 'database',
      adapterId: 'postgres',
      agentId: target.id,
      config: { host: '10.255.0.1', port: 5432, user: 'postgres', password: 'for the agent only' },
    });
    expect(source.status, JSON.stringify(source.body)).toBe(201);
    const answer = server.call('POST', '/api/adapters/test-connection', admin, { id: (source.body as any).id });
    const check = (await target.connection.next()) as Record<string, any>;
    expect(check).toMatchObject({ type: 'call', method: 'check', adapterId: 'postgres' });
    target.connection.send({ type: 'result', id: check.id, value: { ok: true, message: 'reached', latencyMs: 1 } });
    const version = (await target.connection.next()) as Record<string, any>;
    target.connection.send({ type: 'result', id: version.id, value: { version: '16.4', edition: 'PostgreSQL' } });
    expect((await answer).body).toMatchObject({ success: true, message: 'reached' });
  }, 30_000);

  it("the heartbeat's presence write marks every connected agent seen in one batch, and no agent that is not online", async () => {
    const { store } = server.handle.container.resolve(AGENTS);
    const offline = connections.pop()!;
    offline.connection.socket.close();
    await expect.poll(async () => (await store.get(offline.id)).status, { timeout: 10_000 }).toBe('offline');
    const offlineSeen = (await store.get(offline.id)).lastSeenAt;
    const before = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 20));
    await store.touchAll([...connections.map((entry) => entry.id), offline.id]);
    for (const { id } of connections) expect(Date.parse((await store.get(id)).lastSeenAt!)).toBeGreaterThan(before);
    expect((await store.get(offline.id)).lastSeenAt).toBe(offlineSeen);
  }, 30_000);
});
