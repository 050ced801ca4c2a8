// Issue 48 (part 2): a source configuration bound to an agent (`agentId`), and the calls the server makes on it, with
// a scripted agent (support/agent-client.ts) so each frame can be played right or wrong. The real `holdfast agent`
// running backups and restores is tested in apps/cli/test/agent-runs.test.ts.
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AGENTS } from '@holdfast/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handshake, isClosed, newAgentKey, type TestConnection } from './support/agent-client.js';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

describe('sources bound to an agent', () => {
  let server: FullServer;
  let admin: Caller;
  const sockets: TestConnection[] = [];

  beforeAll(async () => {
    server = await startFullServer('sqlite');
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
  const connect = async (token: string, adapters = ['@holdfast/source-postgres']) => {
    const result = await handshake(server.url, newAgentKey(), { token }, { version: '9.9.9-test', host: 'scripted', adapters });
    if (isClosed(result)) throw new Error(`refused: ${result.code} ${result.reason}`);
    sockets.push(result.connection);
    return result.connection;
  };
  const source = (name: string, extra: Record<string, unknown> = {}) => ({
    name,
    type: 'database',
    adapterId: 'postgres',
    config: { user: 'root', host: '10.99.0.2', password: `secret-of-${name}` },
    ...extra,
  });

  it('stores agentId on a source, answers it, and refuses unknown, revoked and non-source bindings with 422 naming the field', async () => {
    const { agent } = await newAgent('binding-agent');
    const created = await server.call('POST', '/api/adapters', admin, source('bound db', { agentId: agent.id }));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.agentId).toBe(agent.id);
    expect((await server.call('GET', `/api/adapters/${created.body.id}`, admin)).body.agentId).toBe(agent.id);
    const plain = await server.call('POST', '/api/adapters', admin, source('server db'));
    expect(plain.body.agentId).toBeNull();

    const unbound = await server.call('PUT', `/api/adapters/${created.body.id}`, admin, { agentId: null });
    expect(unbound.status).toBe(200);
    expect(unbound.body.agentId).toBeNull();
    const rebound = await server.call('PUT', `/api/adapters/${created.body.id}`, admin, { agentId: agent.id });
    expect(rebound.body.agentId).toBe(agent.id);
    // An update without agentId keeps it.
    expect((await server.call('PUT', `/api/adapters/${created.body.id}`, admin, { name: 'bound db 2' })).body.agentId).toBe(agent.id);

    const refused = async (body: unknown, method = 'POST', path = '/api/adapters') => {
      const answer = await server.call(method, path, admin, body);
      expect(answer.status, JSON.stringify(answer.body)).toBe(422);
      expect(answer.body.error).toContain('agentId');
      return answer.body.error as string;
    };
    expect(await refused(source('unknown agent', { agentId: 'no-such-agent' }))).toContain('not found');
    expect(await refused({ agentId: 'no-such-agent' }, 'PUT', `/api/adapters/${plain.body.id}`)).toContain('not found');
    const folder = await server.call('POST', '/api/adapters', admin, { name: 'store', type: 'storage', adapterId: 'local', config: { path: join(tmpdir(), 'hf-agent-binding-store') } });
    expect(folder.status, JSON.stringify(folder.body)).toBe(201);
    expect(await refused({ agentId: agent.id }, 'PUT', `/api/adapters/${folder.body.id}`)).toContain('only sources');
    const { agent: doomed } = await newAgent('doomed-agent');
    expect((await server.call('DELETE', `/api/agents/${doomed.id}`, admin)).status).toBe(200);
    expect(await refused(source('revoked agent', { agentId: doomed.id }))).toContain('revoked');
    // Nothing was saved by the refused requests.
    const names = (await server.call('GET', '/api/adapters?type=database', admin)).body.map((row: { name: string }) => row.name);
    expect(names).not.toContain('unknown agent');
    expect(names).not.toContain('revoked agent');
  });

  it('tests the connection of a bound source through the agent, and reports an offline agent at once', async () => {
    const { agent, enrollmentToken } = await newAgent('test-connection-agent');
    const created = await server.call('POST', '/api/adapters', admin, source('tested db', { agentId: agent.id }));
    const started = Date.now();
    const offline = await server.call('POST', '/api/adapters/test-connection', admin, { id: created.body.id });
    expect(offline.body.success).toBe(false);
    expect(offline.body.message).toContain(`agent "test-connection-agent" is offline`);
    expect(Date.now() - started).toBeLessThan(5_000);

    const connection = await connect(enrollmentToken);
    await waitOnline(agent.id);
    // Its first connection checks its bound sources through it (docs/agents.md "Agent health"): answered first.
    for (const method of ['check', 'detectVersion']) {
      const presence = (await connection.next()) as Record<string, any>;
      expect(presence).toMatchObject({ type: 'call', method });
      connection.send({ type: 'result', id: presence.id, value: method === 'check' ? { ok: true, message: 'ok' } : { version: '16.4' } });
    }
    const answer = server.call('POST', '/api/adapters/test-connection', admin, { id: created.body.id });
    const call = (await connection.next()) as Record<string, any>;
    expect(call).toMatchObject({ type: 'call', method: 'check', adapterId: 'postgres' });
    // The call carries the source's secret for that call (the agent needs it), and only this source's.
    expect(call.config.password).toBe('secret-of-tested db');
    connection.send({ type: 'result', id: call.id, value: { ok: true, message: 'reached from the agent', latencyMs: 3 } });
    const version = (await connection.next()) as Record<string, any>;
    expect(version).toMatchObject({ type: 'call', method: 'detectVersion' });
    connection.send({ type: 'result', id: version.id, value: { version: '16.4', edition: 'PostgreSQL' } });
    const result = await answer;
    expect(result.body).toMatchObject({ success: true, message: 'reached from the agent', version: '16.4' });
  });

  it('refuses a bound source at run time when the agent does not have its adapter package', async () => {
    const { agent, enrollmentToken } = await newAgent('no-postgres-agent');
    await connect(enrollmentToken, ['@holdfast/source-mysql']);
    await waitOnline(agent.id);
    const created = await server.call('POST', '/api/adapters', admin, source('unrunnable db', { agentId: agent.id }));
    const result = await server.call('POST', '/api/adapters/test-connection', admin, { id: created.body.id });
    expect(result.body.success).toBe(false);
    expect(result.body.message).toContain('does not have the adapter package @holdfast/source-postgres');
  });

  it('closes a hostile agent that answers calls it was never given or asks for anything, and never sends it another source\'s secret', async () => {
    // Another agent's source with its own secret: the hostile agent must never see it.
    const { agent: other } = await newAgent('honest-agent');
    const secretSource = await server.call('POST', '/api/adapters', admin, source('someone else db', { agentId: other.id }));
    expect(secretSource.status).toBe(201);
    const { agent: hostileAgent, enrollmentToken } = await newAgent('hostile-agent');
    const key = newAgentKey();
    const received: string[] = [];
    const open = async (claim: { token: string } | { agentId: string }) => {
      const result = await handshake(server.url, key, claim);
      if (isClosed(result)) throw new Error(`refused: ${result.code} ${result.reason}`);
      sockets.push(result.connection);
      result.connection.socket.on('message', (data) => received.push(String(data)));
      await waitOnline(hostileAgent.id);
      return result.connection;
    };
    const probes: Array<{ what: string; frame: unknown }> = [
      { what: 'a result for a call never made', frame: { type: 'result', id: 1, value: { ok: true } } },
      { what: 'an error for a call never made', frame: { type: 'error', id: 7, message: 'x' } },
      { what: 'credit for a call never made', frame: { type: 'credit', id: 3, bytes: 1024 } },
      { what: 'an end for a call never made', frame: { type: 'end', id: 2 } },
      { what: 'data for a call never made', frame: Buffer.from([0, 0, 0, 9, 1, 2, 3]) },
      { what: 'a request for a job', frame: { type: 'get', resource: 'job', id: 'any' } },
      { what: 'a request for a source by id', frame: { type: 'call', id: 1, method: 'check', adapterId: 'postgres', config: { id: secretSource.body.id }, credentials: {}, options: {} } },
      { what: 'a request for a destination', frame: { type: 'destination', id: secretSource.body.id } },
      { what: 'a second hello', frame: { type: 'hello', version: '1', host: 'x', adapters: [] } },
      { what: 'garbage', frame: 'not json' },
    ];
    let connection = await open({ token: enrollmentToken });
    for (const [index, probe] of probes.entries()) {
      if (index > 0) connection = await open({ agentId: hostileAgent.id });
      connection.send(probe.frame);
      const closed = await connection.closed;
      expect(closed.code, probe.what).toBe(4000);
      expect(closed.reason, probe.what).toMatch(/^protocol error/);
    }
    // A real call in flight, answered with bytes it never asked for: closed, and the call fails at once.
    const own = await server.call('POST', '/api/adapters', admin, source('hostile db', { agentId: hostileAgent.id }));
    connection = await open({ agentId: hostileAgent.id });
    const answer = server.call('POST', '/api/adapters/test-connection', admin, { id: own.body.id });
    const call = (await connection.next()) as Record<string, any>;
    expect(call).toMatchObject({ type: 'call', method: 'check' });
    connection.send(Buffer.concat([Buffer.from([0, 0, 0, call.id]), Buffer.from('unasked bytes')]));
    expect((await connection.closed).code).toBe(4000);
    const tested = await answer;
    expect(tested.body).toMatchObject({ success: false, message: 'interrupted: agent "hostile-agent" disconnected during check' });
    // Across every frame it received: only its own source's secret, never the other source's id or secret.
    const all = received.join('\n');
    expect(all).toContain('secret-of-hostile db');
    expect(all).not.toContain('secret-of-someone else db');
    expect(all).not.toContain(secretSource.body.id);
  });

  /** Until the agent's connection said hello on the server (calls can be made on it). */
  async function waitOnline(agentId: string): Promise<void> {
    const { endpoint } = server.handle.container.resolve(AGENTS);
    const deadline = Date.now() + 10_000;
    while (!endpoint.readySession(agentId)) {
      if (Date.now() > deadline) throw new Error('agent not online in time');
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
});
