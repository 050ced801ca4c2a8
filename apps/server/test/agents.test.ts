// Issue 48 (part 1): the agents' routes and WebSocket on the whole product, libsql and PostgreSQL. Agents here are
// scripted WebSocket clients (support/agent-client.ts) so each handshake step can be played right or wrong; the
// real `holdfast agent` process is tested in apps/cli/test/agent-process.test.ts.
import { TOKENS, type AgentPresenceEvent } from '@holdfast/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handshake, isClosed, newAgentKey, openConnection, signatureOf, type Closed, type TestConnection } from './support/agent-client.js';
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

function connected(result: Awaited<ReturnType<typeof handshake>>): { connection: TestConnection; agentId: string } {
  if (isClosed(result)) throw new Error(`handshake refused: ${result.code} ${result.reason}`);
  return result;
}

describe.each(['sqlite', 'postgresql'] as const)('agents on %s', (dialect) => {
  let server: FullServer;
  let admin: Caller;
  const events: Array<{ name: string; event: AgentPresenceEvent }> = [];
  const sockets: TestConnection[] = [];

  beforeAll(async () => {
    server = await startFullServer(dialect);
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    const bus = server.handle.container.resolve(TOKENS.EventBus);
    bus.on('agent_online', (event) => void events.push({ name: 'agent_online', event }));
    bus.on('agent_offline', (event) => void events.push({ name: 'agent_offline', event }));
  }, 120_000);

  afterAll(async () => {
    for (const connection of sockets) connection.socket.terminate();
    await server?.close();
  });

  const create = async (name: string) => {
    const answer = await server.call('POST', '/api/agents', admin, { name });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body as { agent: { id: string; status: string }; enrollmentToken: string; expiresAt: string };
  };
  const agent = async (id: string) => (await server.call('GET', `/api/agents/${id}`, admin)).body;

  it('creates an agent with a one-time token shown once, lists it, and refuses bad input with the field named', async () => {
    const created = await server.call('POST', '/api/agents', admin, { name: 'warehouse-db' });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect(created.body.enrollmentToken).toMatch(/^hfa_enroll_[A-Za-z0-9_-]{43}$/);
    expect(created.body.agent).toMatchObject({ name: 'warehouse-db', status: 'pending', enabled: true, publicKey: null, adapters: [] });
    // Default lifetime 15 minutes.
    const lifetime = Date.parse(created.body.expiresAt) - Date.parse(created.body.agent.createdAt);
    expect(lifetime).toBe(15 * 60_000);
    const listed = (await server.call('GET', '/api/agents', admin)).body.agents;
    expect(listed.map((a: { name: string }) => a.name)).toContain('warehouse-db');
    // The token is never shown again, nor its hash.
    expect(JSON.stringify(listed)).not.toContain(created.body.enrollmentToken);
    expect(JSON.stringify(listed)).not.toMatch(/token_?hash/i);

    const bad = async (method: string, path: string, body: unknown, status: number, field: string) => {
      const answer = await server.call(method, path, admin, body);
      expect(answer.status, `${method} ${path} ${JSON.stringify(body)}`).toBe(status);
      expect(answer.body.error).toContain(field);
    };
    await bad('POST', '/api/agents', {}, 400, 'body.name');
    await bad('POST', '/api/agents', { name: 42 }, 400, 'body.name');
    await bad('POST', '/api/agents', { name: '   ' }, 400, 'body.name');
    await bad('POST', '/api/agents', { name: 'a\nb' }, 400, 'body.name');
    await bad('POST', '/api/agents', { name: 'x'.repeat(101) }, 400, 'body.name');
    await bad('POST', '/api/agents', { name: 'ok', publicKey: 'x' }, 400, 'publicKey');
    await bad('PATCH', `/api/agents/${created.body.agent.id}`, { enabled: 'yes' }, 400, 'body.enabled');
    await bad('POST', '/api/agents', { name: 'warehouse-db' }, 409, 'warehouse-db');
    const second = (await server.call('POST', '/api/agents', admin, { name: 'warehouse-db-2' })).body.agent.id as string;
    await bad('PATCH', `/api/agents/${second}`, { name: 'warehouse-db' }, 409, 'warehouse-db');
    // Two creations racing for one name: the database's unique index decides, the loser gets 409, never a 500.
    const race = await Promise.all([1, 2, 3].map(() => server.call('POST', '/api/agents', admin, { name: 'raced-name' })));
    expect(race.map((answer) => answer.status).sort()).toEqual([201, 409, 409]);
    for (const [method, path] of [['GET', '/api/agents/no-such-agent'], ['PATCH', '/api/agents/no-such-agent'], ['DELETE', '/api/agents/no-such-agent'], ['POST', '/api/agents/no-such-agent/enrollment-token']] as const) {
      const answer = await server.call(method, path, admin, method === 'PATCH' ? { name: 'x' } : method === 'POST' ? {} : undefined);
      expect(answer.status, `${method} ${path}`).toBe(404);
      expect(answer.body).toEqual({ error: 'Agent not found' });
    }
  });

  it('checks agents:read and agents:write with the 401/403 shapes of SPEC.md', async () => {
    const keyWith = async (permissions: string[]) => (await server.call('POST', '/api/api-keys', admin, { name: `agents ${permissions.join(' ')}`, permissions })).body.key as string;
    const reader = await keyWith(['agents:read']);
    const writer = await keyWith(['agents:write']);
    const other = await keyWith(['jobs:read']);
    expect(await server.call('GET', '/api/agents', {})).toMatchObject({ status: 401, body: { error: 'Unauthorized' } });
    expect(await server.call('POST', '/api/agents', {}, { name: 'x' })).toMatchObject({ status: 401, body: { error: 'Unauthorized' } });
    expect(await server.call('GET', '/api/agents', { bearer: other })).toMatchObject({ status: 403, body: { error: 'Forbidden' } });
    expect((await server.call('GET', '/api/agents', { bearer: reader })).status).toBe(200);
    expect(await server.call('POST', '/api/agents', { bearer: reader }, { name: 'by-reader' })).toMatchObject({ status: 403, body: { error: 'Forbidden' } });
    expect(await server.call('GET', '/api/agents', { bearer: writer })).toMatchObject({ status: 403, body: { error: 'Forbidden' } });
    const made = await server.call('POST', '/api/agents', { bearer: writer }, { name: 'by-writer' });
    expect(made.status).toBe(201);
    expect(await server.call('DELETE', `/api/agents/${made.body.agent.id}`, { bearer: reader })).toMatchObject({ status: 403, body: { error: 'Forbidden' } });
    expect((await server.call('DELETE', `/api/agents/${made.body.agent.id}`, { bearer: writer })).status).toBe(200);
  });

  it('enrolls once with the token, then authenticates by key; shows online with version, host and adapters; hostile clients change nothing', async () => {
    const { agent: created, enrollmentToken } = await create('orders-host');
    const key = newAgentKey();
    const first = connected(await handshake(server.url, key, { token: enrollmentToken }));
    sockets.push(first.connection);
    expect(first.agentId).toBe(created.id);
    const online = await waitFor('online', async () => ((await agent(created.id)).status === 'online' ? agent(created.id) : undefined));
    expect(online).toMatchObject({ status: 'online', version: '9.9.9-test', host: 'test-host', adapters: ['@holdfast/source-postgres'], publicKey: key.publicKey, enrollmentExpiresAt: null });
    expect(Date.parse(online.lastSeenAt)).toBeGreaterThan(Date.now() - 60_000);
    await waitFor('agent_online', async () => events.find((e) => e.name === 'agent_online' && e.event.agentId === created.id));

    // The token works once: a second enrollment, even with the right key, is refused with the reason named.
    const again = await handshake(server.url, newAgentKey(), { token: enrollmentToken });
    expect(again).toEqual({ code: 4001, reason: 'enrollment token refused: unknown or already used' });

    // Hostile clients, each refused with a reason; none disturbs the enrolled agent.
    const wrongKey = await handshake(server.url, newAgentKey(), { agentId: created.id });
    expect(wrongKey).toEqual({ code: 4002, reason: 'authentication failed' });
    expect(await handshake(server.url, key, { agentId: 'no-such-agent' })).toEqual({ code: 4002, reason: 'authentication failed' });

    // A signature made for another nonce (a replay of an earlier handshake) does not verify.
    const replay = await openConnection(server.url);
    replay.send({ type: 'authenticate', protocol: 1, agentId: created.id });
    await replay.next();
    replay.send({ type: 'signature', signature: signatureOf(key, created.id, 'an-old-nonce') });
    expect(await replay.closed).toEqual({ code: 4002, reason: 'authentication failed' });

    // A signature for the enrollment subject is no proof of being the agent: the signed text names the agent id.
    const wrongSubject = await openConnection(server.url);
    wrongSubject.send({ type: 'authenticate', protocol: 1, agentId: created.id });
    const nonce = String(((await wrongSubject.next()) as { nonce: string }).nonce);
    wrongSubject.send({ type: 'signature', signature: signatureOf(key, 'enroll', nonce) });
    expect(await wrongSubject.closed).toEqual({ code: 4002, reason: 'authentication failed' });
    const garbage = await openConnection(server.url);
    garbage.send('this is not json');
    expect(await garbage.closed).toEqual({ code: 4000, reason: 'protocol error: frame is not JSON' });
    const binary = await openConnection(server.url);
    binary.send(Buffer.from([1, 2, 3]));
    expect((await binary.closed).code).toBe(4000);
    const huge = await openConnection(server.url);
    huge.send({ type: 'authenticate', protocol: 1, agentId: 'x'.repeat(5_000) });
    expect(await huge.closed).toEqual({ code: 4000, reason: 'protocol error: handshake frame too large' });
    const oversized = await openConnection(server.url);
    // Over MAX_FRAME_BYTES (256 KiB since data frames of calls carry up to 128 KiB): ws refuses it before any parsing.
    oversized.send('x'.repeat(300 * 1024));
    expect((await oversized.closed).code).toBe(1009);
    const wrongShape = await openConnection(server.url);
    wrongShape.send({ type: 'hello', version: '1', host: 'h', adapters: [] });
    expect((await wrongShape.closed).code).toBe(4000);
    const oldProtocol = await openConnection(server.url);
    oldProtocol.send({ type: 'authenticate', protocol: 99, agentId: created.id });
    expect(await oldProtocol.closed).toEqual({ code: 4010, reason: 'unsupported protocol version 99: this server speaks 1' });
    const badKey = await openConnection(server.url);
    badKey.send({ type: 'enroll', protocol: 1, token: 'hfa_enroll_x', publicKey: 'AAAA' });
    expect((await badKey.closed).code).toBe(4000);
    // A client that says nothing is cut when the handshake time (10 s) runs out.
    const silent = await openConnection(server.url);
    const started = Date.now();
    expect(await silent.closed).toEqual({ code: 4008, reason: 'handshake not completed within 10 s' });
    expect(Date.now() - started).toBeLessThan(13_000);

    // Through all of it the enrolled agent stayed connected and online, and still answers.
    expect(first.connection.socket.readyState).toBe(first.connection.socket.OPEN);
    expect((await agent(created.id)).status).toBe('online');
    const pong = new Promise<void>((resolve) => first.connection.socket.once('pong', () => resolve()));
    first.connection.socket.ping();
    await pong;
    // Its key still authenticates (the newer connection replaces the older one).
    const second = connected(await handshake(server.url, key, { agentId: created.id }));
    sockets.push(second.connection);
    expect(await first.connection.closed).toEqual({ code: 4009, reason: 'replaced by a newer connection of the same agent' });
    expect((await agent(created.id)).status).toBe('online');
  }, 60_000);

  it('disable closes the connection at once and refuses it until enabled; revoke closes it and refuses it for ever', async () => {
    const { agent: created, enrollmentToken } = await create('billing-host');
    const key = newAgentKey();
    const live = connected(await handshake(server.url, key, { token: enrollmentToken }));
    sockets.push(live.connection);
    await waitFor('online', async () => ((await agent(created.id)).status === 'online' ? true : undefined));

    const started = Date.now();
    // The answer comes once the connection is closed and recorded: it already shows the agent offline.
    expect((await server.call('PATCH', `/api/agents/${created.id}`, admin, { enabled: false })).body).toMatchObject({ enabled: false, status: 'offline' });
    expect(await live.connection.closed).toEqual({ code: 4003, reason: 'agent disabled by an administrator' });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await waitFor('offline', async () => ((await agent(created.id)).status === 'offline' ? true : undefined))).toBe(true);
    const offline = await waitFor('agent_offline', async () => events.find((e) => e.name === 'agent_offline' && e.event.agentId === created.id));
    expect(offline.event).toMatchObject({ agentName: 'billing-host', host: 'test-host', reason: 'agent disabled by an administrator' });
    expect(await handshake(server.url, key, { agentId: created.id })).toEqual({ code: 4003, reason: 'agent disabled by an administrator' });

    expect((await server.call('PATCH', `/api/agents/${created.id}`, admin, { enabled: true, name: 'billing-host-2' })).body).toMatchObject({ enabled: true, name: 'billing-host-2' });
    const back = connected(await handshake(server.url, key, { agentId: created.id }));
    sockets.push(back.connection);
    await waitFor('online again', async () => ((await agent(created.id)).status === 'online' ? true : undefined));
    // Its return is announced, as its going offline was: two agent_online events now.
    await waitFor('second agent_online', async () => (events.filter((e) => e.name === 'agent_online' && e.event.agentId === created.id).length === 2 ? true : undefined));

    const revokedAt = Date.now();
    const revoked = await server.call('DELETE', `/api/agents/${created.id}`, admin);
    expect(revoked.body).toMatchObject({ status: 'revoked' });
    expect(await back.connection.closed).toEqual({ code: 4004, reason: 'agent revoked: it can never connect again' });
    expect(Date.now() - revokedAt).toBeLessThan(2_000);
    expect(await handshake(server.url, key, { agentId: created.id })).toEqual({ code: 4004, reason: 'agent revoked: it can never connect again' });
    // Nothing brings it back: no new token, no change; its name is free for a new agent.
    expect((await server.call('POST', `/api/agents/${created.id}/enrollment-token`, admin, {})).status).toBe(409);
    expect((await server.call('PATCH', `/api/agents/${created.id}`, admin, { enabled: true })).status).toBe(409);
    expect((await agent(created.id)).status).toBe('revoked');
    expect((await server.call('POST', '/api/agents', admin, { name: 'billing-host-2' })).status).toBe(201);

    const audit = (await server.call('GET', `/api/audit?resource=agent&pageSize=200`, admin)).body.entries as Array<{ action: string; resourceId: string }>;
    const mine = audit.filter((entry) => entry.resourceId === created.id).map((entry) => entry.action).sort();
    expect(mine).toEqual(['agent.create', 'agent.disable', 'agent.enable', 'agent.revoke']);
  }, 60_000);

  it('a new token re-pairs an enrolled agent: the new key replaces the old one; an outstanding token is replaced', async () => {
    const { agent: created, enrollmentToken } = await create('repair-host');
    const replacedToken = (await server.call('POST', `/api/agents/${created.id}/enrollment-token`, admin, {})).body.enrollmentToken as string;
    expect(replacedToken).not.toBe(enrollmentToken);
    expect(await handshake(server.url, newAgentKey(), { token: enrollmentToken })).toEqual({ code: 4001, reason: 'enrollment token refused: unknown or already used' });
    const oldKey = newAgentKey();
    connected(await handshake(server.url, oldKey, { token: replacedToken })).connection.socket.terminate();

    const rePair = await server.call('POST', `/api/agents/${created.id}/enrollment-token`, admin);
    expect(rePair.status).toBe(200);
    const newKey = newAgentKey();
    const paired = connected(await handshake(server.url, newKey, { token: rePair.body.enrollmentToken }));
    sockets.push(paired.connection);
    expect((await agent(created.id)).publicKey).toBe(newKey.publicKey);
    expect(await handshake(server.url, oldKey, { agentId: created.id })).toEqual({ code: 4002, reason: 'authentication failed' } satisfies Closed);
  }, 30_000);
});
