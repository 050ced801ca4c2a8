// Issue 48, scope 3 (test restores): a job whose PostgreSQL source runs on a real `holdfast agent` gets its test
// restore there: the newest backup is restored through the agent into a throwaway database on the agent's server,
// its row counts are compared with the figures the backup recorded (also read through the agent), and the throwaway
// database is dropped, every scratch operation a call on the agent.
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { psql, startAgentTestServer, uniqueName, type AgentTestServer, type TestAgent } from './support/agent-harness.js';

describe('test restores of a source on an agent', () => {
  let server: AgentTestServer;
  let agent: TestAgent;
  const source = uniqueName('hf_agent_scratch');

  beforeAll(async () => {
    await psql(`CREATE DATABASE ${source}`);
    await psql(`CREATE TABLE items (id int PRIMARY KEY, label text); INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 2500) g;`, source);
    server = await startAgentTestServer();
    agent = await server.startAgent('scratch-agent');
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await psql(`DROP DATABASE IF EXISTS ${source} WITH (FORCE)`).catch(() => undefined);
  });

  const agentCalls = (method: string, from: number) =>
    agent.process.stdoutLines.slice(from).filter((line) => line.includes('"call started"') && line.includes(`"method":"${method}"`)).length;

  it('restores the newest backup into a throwaway database on the agent\'s server, checks it and drops it', async () => {
    const created = await server.call('POST', '/api/adapters', { name: 'pg on agent', type: 'database', adapterId: 'postgres', config: { user: 'root', host: '127.0.0.1' }, agentId: agent.id });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    await mkdir(join(server.work, 'scratch-backups'));
    const local = await server.call('POST', '/api/adapters', { name: 'local', type: 'storage', adapterId: 'local', config: { path: join(server.work, 'scratch-backups') } });
    expect(local.status, JSON.stringify(local.body)).toBe(201);
    const job = await server.call('POST', '/api/jobs', {
      name: 'scratch job',
      schedule: '0 3 * * *',
      sourceId: created.body.id,
      databases: [source],
      compression: 'GZIP',
      destinations: [{ configId: local.body.id, priority: 0 }],
      testRestore: { target: { type: 'database' } },
    });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    const backupStart = agent.process.stdoutLines.length;
    const run = await server.call('POST', `/api/jobs/${job.body.id}/run`, {});
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    const backup = await server.settled(run.body.executionId);
    expect(backup.status, JSON.stringify(backup.logs?.slice(-6))).toBe('Success');
    // The backup's figures (row counts) were read on the agent too.
    expect(agentCalls('scratchFigures', backupStart)).toBeGreaterThanOrEqual(1);

    const before = agent.process.stdoutLines.length;
    const queued = await server.call('POST', `/api/jobs/${job.body.id}/test-restore`, {});
    expect(queued.status, JSON.stringify(queued.body)).toBeLessThan(300);
    const tested = await server.settled(queued.body.executionId);
    expect(tested.status, JSON.stringify(tested.logs?.slice(-10))).toBe('Success');
    expect(agentCalls('restore', before)).toBe(1);
    expect(agentCalls('scratchFigures', before)).toBeGreaterThanOrEqual(1);
    expect(agentCalls('scratchDropDatabase', before)).toBeGreaterThanOrEqual(1);
    // Nothing of this test restore is left on the agent's server.
    const tag = String(queued.body.executionId).replace(/-/g, '').slice(0, 12);
    expect(await psql(`SELECT count(*) FROM pg_database WHERE datname LIKE 'hf_test_restore_${tag}%'`)).toBe('0');
  }, 180_000);
});
