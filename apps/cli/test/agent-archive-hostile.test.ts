// Seekable archives through an agent that is older or hostile, played by a scripted agent (the server's test client,
// apps/server/test/support/agent-client.ts) against a real server: an agent without the `archive` feature fails the
// run with the "upgrade it" message before any dump; an agent answering archiveDump with a malformed stream (an
// unknown part kind, or an index whose checksum does not match) fails the run and nothing stays at the destination.
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { dataFrame, partFrames, PART } from '@holdfast/agents/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handshake, isClosed, newAgentKey, type TestConnection } from '../../server/test/support/agent-client.js';
import { startAgentTestServer, type AgentTestServer } from './support/agent-harness.js';

const ADAPTERS = ['@holdfast/source-directory'];

describe('seekable archives through an older or hostile agent', () => {
  let server: AgentTestServer;
  const sockets: TestConnection[] = [];

  beforeAll(async () => {
    server = await startAgentTestServer();
  }, 120_000);

  afterAll(async () => {
    for (const connection of sockets) connection.socket.terminate();
    await server?.close();
  });

  async function scriptedAgent(name: string, features: string[]): Promise<{ id: string; connection: TestConnection }> {
    const created = await server.call('POST', '/api/agents', { name });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const result = await handshake(server.url, newAgentKey(), { token: created.body.enrollmentToken }, { version: '9.9.9-test', host: 'scripted', adapters: ADAPTERS, features } as never);
    if (isClosed(result)) throw new Error(`refused: ${result.code} ${result.reason}`);
    sockets.push(result.connection);
    while ((await server.call('GET', `/api/agents/${created.body.agent.id}`)).body.status !== 'online') await new Promise((resolve) => setTimeout(resolve, 100));
    return { id: created.body.agent.id, connection: result.connection };
  }

  /** A SEEKABLE job of a folder source bound to `agentId`, with its own local destination folder. */
  async function seekableJob(name: string, agentId: string): Promise<{ jobId: string; storage: string }> {
    const storage = join(server.work, `${name}-storage`);
    await mkdir(storage);
    const source = await server.call('POST', '/api/adapters', { name: `${name} folder`, type: 'database', adapterId: 'directory', config: { paths: ['/srv/data'] }, agentId });
    expect(source.status, JSON.stringify(source.body)).toBe(201);
    const local = await server.call('POST', '/api/adapters', { name: `${name} disk`, type: 'storage', adapterId: 'local', config: { path: storage } });
    const job = await server.call('POST', '/api/jobs', { name, schedule: '0 3 * * *', sourceId: source.body.id, compression: 'ZSTD', archiveFormat: 'SEEKABLE', destinations: [{ configId: local.body.id, priority: 0 }] });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    return { jobId: job.body.id, storage };
  }

  /** Answers the server's calls: `archiveDump` with `onDump`, detectVersion with a version, anything else with an error. */
  function serve(connection: TestConnection, onDump: (id: number) => void): { methods: string[]; cancelled: number[] } {
    const methods: string[] = [];
    const cancelled: number[] = [];
    void (async () => {
      for (;;) {
        const frame = await connection.next(120_000).catch(() => undefined);
        if (!frame || isClosed(frame)) return;
        if (frame.type === 'cancel') cancelled.push(Number(frame.id));
        if (frame.type !== 'call') continue;
        const id = Number(frame.id);
        methods.push(String(frame.method));
        if (frame.method === 'archiveDump') onDump(id);
        else if (frame.method === 'detectVersion') connection.send({ type: 'result', id, value: { version: '1' } });
        else connection.send({ type: 'error', id, message: `scripted agent: no ${String(frame.method)}` });
      }
    })();
    return { methods, cancelled };
  }

  async function runJob(jobId: string): Promise<any> {
    const answer = await server.call('POST', `/api/jobs/${jobId}/run`, {});
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return server.settled(answer.body.executionId);
  }

  it('fails a seekable run on an agent without the archive feature, asking to upgrade it, before any dump', async () => {
    const { id, connection } = await scriptedAgent('old-agent', ['scratch']);
    const served = serve(connection, () => undefined);
    const { jobId, storage } = await seekableJob('old agent tree', id);
    const run = await runJob(jobId);
    expect(run.status).toBe('Failed');
    expect(run.error).toMatch(/agent "old-agent" \(version 9\.9\.9-test\) does not answer archive calls: upgrade it/);
    expect(served.methods).not.toContain('archiveDump');
    expect(await readdir(storage)).toEqual([]);
  }, 120_000);

  it('fails the run when the agent sends an unknown part kind, leaving nothing at the destination', async () => {
    const { id, connection } = await scriptedAgent('garbling-agent', ['scratch', 'scratch-files', 'archive']);
    serve(connection, (call) => {
      connection.send({ type: 'opened', id: call, extension: '.hfa' });
      connection.socket.send(dataFrame(call, Buffer.from([9, 0, 0, 0, 3, 1, 2, 3])), { binary: true });
      connection.send({ type: 'end', id: call });
      connection.send({ type: 'result', id: call, value: { bytes: 3, databases: ['/srv/data'], warnings: [], archiveSize: 0 } });
    });
    const { jobId, storage } = await seekableJob('garbled tree', id);
    const run = await runJob(jobId);
    expect(run.status).toBe('Failed');
    expect(run.error).toMatch(/unexpected part kind 9/);
    expect(await readdir(storage)).toEqual([]);
  }, 120_000);

  it('fails the run when the index the agent sends does not match its checksum', async () => {
    const { id, connection } = await scriptedAgent('forging-agent', ['scratch', 'scratch-files', 'archive']);
    serve(connection, (call) => {
      connection.send({ type: 'opened', id: call, extension: '.hfa' });
      const archive = Buffer.alloc(1000, 1);
      const forged = Buffer.from(`HOLDFAST-INDEX 1 sha256=${'0'.repeat(64)}\n{"entries":[]}`);
      for (const part of [...partFrames(PART.bytes, archive), ...partFrames(PART.index, forged)]) connection.socket.send(dataFrame(call, part), { binary: true });
      connection.send({ type: 'end', id: call });
      connection.send({ type: 'result', id: call, value: { bytes: 1000, databases: ['/srv/data'], warnings: [], archiveSize: 1000 } });
    });
    const { jobId, storage } = await seekableJob('forged tree', id);
    const run = await runJob(jobId);
    expect(run.status).toBe('Failed');
    expect(run.error).toMatch(/index file that does not match its checksum/);
    expect(await readdir(storage)).toEqual([]);
  }, 120_000);

  it('cancels an archive run whose agent stalls mid-archive: the agent gets cancel, the run is Cancelled, nothing stored', async () => {
    const { id, connection } = await scriptedAgent('stalling-agent', ['scratch', 'scratch-files', 'archive']);
    let dumpCall = 0;
    const served = serve(connection, (call) => {
      dumpCall = call;
      connection.send({ type: 'opened', id: call, extension: '.hfa' });
      for (const part of partFrames(PART.bytes, Buffer.alloc(64 * 1024, 5))) connection.socket.send(dataFrame(call, part), { binary: true });
      // ...and nothing more: no end, no result.
    });
    const { jobId, storage } = await seekableJob('stalled tree', id);
    const answer = await server.call('POST', `/api/jobs/${jobId}/run`, {});
    expect(answer.status).toBe(200);
    const deadline = Date.now() + 30_000;
    while (dumpCall === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(dumpCall).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const cancel = await server.call('POST', `/api/executions/${answer.body.executionId}/cancel`, {});
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
    const run = await server.settled(answer.body.executionId, 30_000);
    expect(run.status).toBe('Cancelled');
    expect(served.cancelled).toContain(dumpCall);
    expect(await readdir(storage)).toEqual([]);
  }, 120_000);

  it('fails an archive run as interrupted when the agent drops mid-archive, nothing stored', async () => {
    const { id, connection } = await scriptedAgent('dropping-agent', ['scratch', 'scratch-files', 'archive']);
    serve(connection, (call) => {
      connection.send({ type: 'opened', id: call, extension: '.hfa' });
      for (const part of partFrames(PART.bytes, Buffer.alloc(64 * 1024, 6))) connection.socket.send(dataFrame(call, part), { binary: true });
      setTimeout(() => connection.socket.terminate(), 300);
    });
    const { jobId, storage } = await seekableJob('dropped tree', id);
    const run = await runJob(jobId);
    expect(run.status).toBe('Failed');
    expect(run.error).toMatch(/interrupted: agent "dropping-agent" disconnected during archiveDump/);
    expect(await readdir(storage)).toEqual([]);
  }, 120_000);
});
