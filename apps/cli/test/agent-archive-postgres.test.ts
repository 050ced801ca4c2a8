// A SEEKABLE PostgreSQL job whose source runs on a real `holdfast agent`: pg_dump's output is written as a seekable
// archive on the agent, stored with its index by the server, and restored through the agent into a new database
// from the members the server sends; the rows are identical.
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { psql, startAgentTestServer, tableDigestSql, uniqueName, type AgentTestServer, type TestAgent } from './support/agent-harness.js';

describe('seekable PostgreSQL archives through an agent', () => {
  let server: AgentTestServer;
  let agent: TestAgent;
  const source = uniqueName('hf_agent_hfa');
  const restored = uniqueName('hf_agent_hfa_restored');

  beforeAll(async () => {
    await psql(`CREATE DATABASE ${source}`);
    await psql(`CREATE TABLE items (id int PRIMARY KEY, label text); INSERT INTO items SELECT g, 'item ' || g FROM generate_series(1, 3000) g;`, source);
    server = await startAgentTestServer();
    agent = await server.startAgent('hfa-pg-agent');
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    for (const name of [source, restored]) await psql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => undefined);
  });

  const agentCalls = (method: string, from: number) =>
    agent.process.stdoutLines.slice(from).filter((line) => line.includes('"call started"') && line.includes(`"method":"${method}"`)).length;

  it('backs up into a seekable archive on the agent and restores it into a new database there, rows identical', async () => {
    const pg = await server.call('POST', '/api/adapters', { name: 'pg on agent', type: 'database', adapterId: 'postgres', config: { user: 'root', host: '127.0.0.1' }, agentId: agent.id });
    expect(pg.status, JSON.stringify(pg.body)).toBe(201);
    const storage = join(server.work, 'hfa-pg');
    await mkdir(storage);
    const local = await server.call('POST', '/api/adapters', { name: 'hfa disk', type: 'storage', adapterId: 'local', config: { path: storage } });
    const job = await server.call('POST', '/api/jobs', { name: 'hfa pg', schedule: '0 3 * * *', sourceId: pg.body.id, databases: [source], compression: 'ZSTD', archiveFormat: 'SEEKABLE', destinations: [{ configId: local.body.id, priority: 0 }] });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    const from = agent.process.stdoutLines.length;
    const run = await server.call('POST', `/api/jobs/${job.body.id}/run`, {});
    const backup = await server.settled(run.body.executionId);
    expect(backup.status, JSON.stringify(backup.logs?.slice(-6))).toBe('Success');
    expect(agentCalls('archiveDump', from)).toBe(1);
    const file = (await readdir(storage)).find((name) => name.endsWith('.hfa'))!;
    expect(file).toBeDefined();
    expect((await readdir(storage))).toContain(`${file}.index.json`);
    const restore = await server.call('POST', `/api/storage/${local.body.id}/restore`, { file, database: restored, targetSourceId: pg.body.id });
    expect(restore.status, JSON.stringify(restore.body)).toBe(200);
    const done = await server.settled(restore.body.executionId);
    expect(done.status, JSON.stringify(done.logs?.slice(-6))).toBe('Success');
    expect(agentCalls('archiveRestore', from)).toBe(1);
    expect(await psql(tableDigestSql('items'), restored)).toBe(await psql(tableDigestSql('items'), source));
  }, 180_000);
});
