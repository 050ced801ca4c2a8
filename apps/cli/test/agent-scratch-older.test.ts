// A test restore into a scratch file of a source on an agent older than the `scratch-files` feature (a scripted agent
// listing only `scratch`): the backup still works (its figures are skipped with a warning), and the test restore fails
// asking to upgrade the agent, before any scratch call reaches it.
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { dataFrame } from '@holdfast/agents/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handshake, isClosed, newAgentKey, type TestConnection } from '../../server/test/support/agent-client.js';
import { startAgentTestServer, type AgentTestServer } from './support/agent-harness.js';

describe('scratch files through an agent without the scratch-files feature', () => {
  let server: AgentTestServer;
  let connection: TestConnection | undefined;

  beforeAll(async () => {
    server = await startAgentTestServer();
  }, 120_000);

  afterAll(async () => {
    connection?.socket.terminate();
    await server?.close();
  });

  it('fails the test restore asking to upgrade the agent, with no scratch call sent to it', async () => {
    const created = await server.call('POST', '/api/agents', { name: 'old-scratch-agent' });
    expect(created.status).toBe(201);
    const result = await handshake(server.url, newAgentKey(), { token: created.body.enrollmentToken }, { version: '9.9.9-test', host: 'scripted', adapters: ['@holdfast/source-sqlite'], features: ['scratch'] } as never);
    if (isClosed(result)) throw new Error(`refused: ${result.code} ${result.reason}`);
    connection = result.connection;
    const agentId = created.body.agent.id;
    while ((await server.call('GET', `/api/agents/${agentId}`)).body.status !== 'online') await new Promise((resolve) => setTimeout(resolve, 100));
    const methods: string[] = [];
    void (async () => {
      for (;;) {
        const frame = await connection!.next(120_000).catch(() => undefined);
        if (!frame || isClosed(frame)) return;
        if (frame.type !== 'call') continue;
        const id = Number(frame.id);
        methods.push(String(frame.method));
        if (frame.method === 'dump') {
          connection!.send({ type: 'opened', id, extension: '.sqlite' });
          connection!.socket.send(dataFrame(id, Buffer.from('SQLite format 3\u0000 scripted')), { binary: true });
          connection!.send({ type: 'end', id });
          connection!.send({ type: 'result', id, value: { bytes: 24, databases: ['/srv/app.sqlite'], warnings: [] } });
        } else if (frame.method === 'detectVersion') connection!.send({ type: 'result', id, value: { version: '3.45.1' } });
        else connection!.send({ type: 'error', id, message: `scripted agent: no ${String(frame.method)}` });
      }
    })();
    const source = await server.call('POST', '/api/adapters', { name: 'old sqlite', type: 'database', adapterId: 'sqlite', config: { path: '/srv/app.sqlite' }, agentId });
    expect(source.status, JSON.stringify(source.body)).toBe(201);
    const storage = join(server.work, 'old-scratch-storage');
    await mkdir(storage);
    const local = await server.call('POST', '/api/adapters', { name: 'old disk', type: 'storage', adapterId: 'local', config: { path: storage } });
    const parent = join(server.work, 'old-scratch');
    const job = await server.call('POST', '/api/jobs', { name: 'old sqlite job', schedule: '0 3 * * *', sourceId: source.body.id, compression: 'GZIP', destinations: [{ configId: local.body.id, priority: 0 }], testRestore: { target: { type: 'sqlite', path: parent } } });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    const run = await server.call('POST', `/api/jobs/${job.body.id}/run`, {});
    const backup = await server.settled(run.body.executionId);
    expect(backup.status, JSON.stringify(backup.logs?.slice(-6))).toBe('Success');
    expect(JSON.stringify(backup.logs)).toMatch(/counts could not be read \(.*does not answer scratch-files calls: upgrade it/);
    const queued = await server.call('POST', `/api/jobs/${job.body.id}/test-restore`, {});
    expect(queued.status, JSON.stringify(queued.body)).toBeLessThan(300);
    const tested = await server.settled(queued.body.executionId);
    expect(tested.status).toBe('Failed');
    expect(tested.error).toMatch(/agent "old-scratch-agent" \(version 9\.9\.9-test\) does not answer scratch-files calls: upgrade it/);
    expect(methods.filter((method) => method.startsWith('scratch'))).toEqual([]);
    expect(methods).not.toContain('restore');
    expect(await readdir(parent).catch(() => [])).toEqual([]);
  }, 120_000);
});
