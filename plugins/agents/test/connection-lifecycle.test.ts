// The agents endpoint on the server's listener (libsql and PostgreSQL): an upgrade on another path is a 404,
// shutdown closes connected agents first, and dead connections (docs/agents.md "Networking"): an agent that stops
// answering pings is cut within two ping periods, recorded offline and announced with agent_offline naming the
// reason; one that answers stays. The ping period is shortened to 300 ms here; the server's is 15 s.
import 'reflect-metadata';
import { generateKeyPairSync, sign } from 'node:crypto';
import { createPersistencePlugin } from '@holdfast/persistence';
import { TOKENS, type AgentPresenceEvent } from '@holdfast/kernel';
import { startPluginApp, type PluginApp } from '@holdfast/tooling/harness/plugin-app';
import { createTestSite } from '@holdfast/tooling/harness/test-site';
import { container as rootContainer } from 'tsyringe';
import { afterEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { AGENTS, createAgentsPlugin } from '../src/plugin.js';
import { AGENT_CONNECT_PATH, rawPublicKey, signedChallenge } from '../src/protocol.js';

const PING_MS = 300;

/** Enrolls a new key with `token` and says hello; `autoPong: false` plays an agent whose process hangs. */
async function enrolledSocket(url: string, token: string, answersPings: boolean): Promise<WebSocket> {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  const socket = new WebSocket(`${url.replace(/^http/, 'ws')}${AGENT_CONNECT_PATH}`, { autoPong: answersPings });
  const frames: Array<Record<string, unknown>> = [];
  socket.on('message', (data) => frames.push(JSON.parse(String(data)) as Record<string, unknown>));
  const next = async () => {
    while (frames.length === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    return frames.shift()!;
  };
  await new Promise((resolve) => socket.once('open', resolve));
  socket.send(JSON.stringify({ type: 'enroll', protocol: 1, token, publicKey: rawPublicKey(publicKey) }));
  const { nonce } = await next();
  socket.send(JSON.stringify({ type: 'signature', signature: sign(null, signedChallenge('enroll', String(nonce)), privateKey).toString('base64url') }));
  expect((await next()).type).toBe('welcome');
  socket.send(JSON.stringify({ type: 'hello', version: '1.0.0', host: answersPings ? 'healthy' : 'hung', adapters: [] }));
  return socket;
}

describe.each(['sqlite', 'postgresql'] as const)('agent heartbeat on %s', (dialect) => {
  let app: PluginApp | undefined;

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('cuts an agent that stops answering pings within two periods and keeps one that answers', async () => {
    const container = rootContainer.createChildContainer();
    app = await startPluginApp({
      site: await createTestSite(dialect, 'agent-heartbeat'),
      container,
      plugins: [createPersistencePlugin(), createAgentsPlugin({ env: {}, endpoint: { pingIntervalMs: PING_MS } })],
    });
    const offline: AgentPresenceEvent[] = [];
    container.resolve(TOKENS.EventBus).on('agent_offline', (event) => void offline.push(event));
    const { store } = container.resolve(AGENTS);
    const hung = await store.create('hung-agent');
    const healthy = await store.create('healthy-agent');
    const hungSocket = await enrolledSocket(app.url, hung.token, false);
    const healthySocket = await enrolledSocket(app.url, healthy.token, true);
    const online = Date.now();
    while ((await store.get(hung.agent.id)).status !== 'online') await new Promise((resolve) => setTimeout(resolve, 20));

    const closed = await new Promise<number>((resolve) => hungSocket.once('close', (code) => resolve(code)));
    // Terminated, not closed politely: the peer sees an abnormal closure.
    expect(closed).toBe(1006);
    expect(Date.now() - online).toBeLessThan(3 * PING_MS + 500);
    while ((await store.get(hung.agent.id)).status !== 'offline') await new Promise((resolve) => setTimeout(resolve, 20));
    expect(offline).toEqual([expect.objectContaining({ agentId: hung.agent.id, agentName: 'hung-agent', host: 'hung', reason: 'no answer to pings' })]);

    // The answering agent outlives several more periods, and its lastSeenAt moves with the pongs.
    const seen = (await store.get(healthy.agent.id)).lastSeenAt;
    await new Promise((resolve) => setTimeout(resolve, 4 * PING_MS));
    expect(healthySocket.readyState).toBe(WebSocket.OPEN);
    const after = await store.get(healthy.agent.id);
    expect(after.status).toBe('online');
    expect(Date.parse(after.lastSeenAt!)).toBeGreaterThan(Date.parse(seen!));
    healthySocket.terminate();
  }, 30_000);

  it('answers an upgrade on any other path with 404, and closing the server does not wait on a connected agent', async () => {
    const container = rootContainer.createChildContainer();
    app = await startPluginApp({ site: await createTestSite(dialect, 'agent-upgrades'), container, plugins: [createPersistencePlugin(), createAgentsPlugin({ env: {} })] });
    const stray = new WebSocket(`${app.url.replace(/^http/, 'ws')}/api/agents/connect-not`);
    const refusal = await new Promise<string>((resolve) => stray.once('error', (error) => resolve(error.message)));
    expect(refusal).toBe('Unexpected server response: 404');

    const { store } = container.resolve(AGENTS);
    const announced: string[] = [];
    container.resolve(TOKENS.EventBus).on('agent_offline', (event) => void announced.push(event.reason ?? ''));
    const agent = await store.create('connected-at-shutdown');
    const socket = await enrolledSocket(app.url, agent.token, true);
    while ((await store.get(agent.agent.id)).status !== 'online') await new Promise((resolve) => setTimeout(resolve, 20));
    const closed = new Promise<{ code: number; reason: string }>((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: String(reason) })));
    const started = Date.now();
    await app.close();
    app = undefined;
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(await closed).toEqual({ code: 1001, reason: 'server stopping' });
    // Not announced: the server stopping is not news about the agent (it comes back when the server does).
    expect(announced).toEqual([]);
  }, 30_000);
});
