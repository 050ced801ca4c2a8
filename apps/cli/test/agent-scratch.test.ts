// Issue 48: test restores of agent-bound sources whose scratch is a FILE (SQLite) or a reserved INDEX (Redis), on a
// real `holdfast agent`: the newest backup is restored through the agent into a scratch file in a throwaway folder the
// agent makes on its disk (or into the reserved index of the agent's Redis), checked against the figures the backup
// recorded (read on the agent too), and the scratch is removed afterwards (folder gone, index empty).
// Redis: the local 127.0.0.1:6379, indexes 1 and 2, which belong to this file alone and are flushed here (source-redis
// owns 3, 4, 7, 8 and 10-15, the engine's test restore test 5 and 6, the bench 9).
import { execFileSync } from 'node:child_process';
import { mkdir, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAgentTestServer, type AgentTestServer, type TestAgent } from './support/agent-harness.js';

const SOURCE_DB = 1;
const SCRATCH_DB = 2;
const redis = (db: number, ...args: string[]): string => execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', '6379', '-n', String(db), ...args], { encoding: 'utf8' }).trim();
const sqlite = (file: string, sql: string): string => execFileSync('sqlite3', [file, sql], { encoding: 'utf8' }).trim();

describe('test restores into a scratch file or a reserved index through an agent', () => {
  let server: AgentTestServer;
  let agent: TestAgent;
  let storage: string;

  beforeAll(async () => {
    redis(SOURCE_DB, 'FLUSHDB');
    redis(SCRATCH_DB, 'FLUSHDB');
    const seed: string[] = [];
    for (let i = 0; i < 250; i++) seed.push(`SET user:${i} "name ${i}"`);
    for (let i = 0; i < 5; i++) seed.push(`SET session:${i} open EX 3600`);
    execFileSync('redis-cli', ['-h', '127.0.0.1', '-p', '6379', '-n', String(SOURCE_DB)], { input: `${seed.join('\n')}\n` });
    server = await startAgentTestServer();
    agent = await server.startAgent('scratch-files-agent');
    storage = join(server.work, 'scratch-file-backups');
    await mkdir(storage);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    redis(SOURCE_DB, 'FLUSHDB');
    redis(SCRATCH_DB, 'FLUSHDB');
  });

  const agentCalls = (method: string, from: number) =>
    agent.process.stdoutLines.slice(from).filter((line) => line.includes('"call started"') && line.includes(`"method":"${method}"`)).length;

  async function backupThenTestRestore(name: string, sourceId: string, job: Record<string, unknown>): Promise<{ tested: any; from: number }> {
    const local = await server.call('POST', '/api/adapters', { name: `${name} local`, type: 'storage', adapterId: 'local', config: { path: storage } });
    expect(local.status, JSON.stringify(local.body)).toBe(201);
    const created = await server.call('POST', '/api/jobs', { name, schedule: '0 3 * * *', sourceId, compression: 'GZIP', destinations: [{ configId: local.body.id, priority: 0 }], ...job });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const run = await server.call('POST', `/api/jobs/${created.body.id}/run`, {});
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    const backup = await server.settled(run.body.executionId);
    expect(backup.status, JSON.stringify(backup.logs?.slice(-6))).toBe('Success');
    const from = agent.process.stdoutLines.length;
    const queued = await server.call('POST', `/api/jobs/${created.body.id}/test-restore`, {});
    expect(queued.status, JSON.stringify(queued.body)).toBeLessThan(300);
    return { tested: await server.settled(queued.body.executionId), from };
  }

  it('restores a SQLite file on the agent into a scratch file in a folder the agent makes, checks it and removes the folder', async () => {
    const file = join(server.work, 'agent app.sqlite');
    sqlite(
      file,
      `CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT);
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1800) INSERT INTO customers SELECT i, 'customer ' || i FROM n;
       CREATE TABLE orders (id INTEGER PRIMARY KEY, qty INTEGER);
       WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 77) INSERT INTO orders SELECT i, i FROM n;`,
    );
    const source = await server.call('POST', '/api/adapters', { name: 'sqlite on agent', type: 'database', adapterId: 'sqlite', config: { path: file }, agentId: agent.id });
    expect(source.status, JSON.stringify(source.body)).toBe(201);
    // A parent that does not exist yet: the agent makes it (and the scratch folder below it) on its disk.
    const parent = join(server.work, 'agent-scratch', 'sqlite');
    const { tested, from } = await backupThenTestRestore('sqlite scratch job', source.body.id, { testRestore: { target: { type: 'sqlite', path: parent } } });
    expect(tested.status, JSON.stringify(tested.logs?.slice(-10))).toBe('Success');
    const log = JSON.stringify(tested.logs);
    // Row counts of the scratch file (read on the agent) equal the figures the backup recorded: 1800 + 77 rows.
    expect(log).toContain('row counts: ok (1877 rows in 2 tables match)');
    expect(log).toContain('check integrity_check: ok');
    expect(agentCalls('scratchMakeFolder', from)).toBe(1);
    expect(agentCalls('restore', from)).toBe(1);
    expect(agentCalls('scratchIntegrityCheck', from)).toBeGreaterThanOrEqual(1);
    expect(agentCalls('scratchFigures', from)).toBeGreaterThanOrEqual(1);
    expect(agentCalls('scratchRemoveFolder', from)).toBe(1);
    // The folder was made by the agent and is gone again; the source file is untouched.
    expect(await readdir(parent)).toEqual([]);
    expect(sqlite(file, 'SELECT count(*) FROM customers')).toBe('1800');
  }, 240_000);

  it('restores a Redis database on the agent into the reserved index of its Redis, checks it and empties the index', async () => {
    const source = await server.call('POST', '/api/adapters', { name: 'redis on agent', type: 'database', adapterId: 'redis', config: { host: '127.0.0.1', port: 6379, database: SOURCE_DB }, agentId: agent.id });
    expect(source.status, JSON.stringify(source.body)).toBe(201);
    const { tested, from } = await backupThenTestRestore('redis scratch job', source.body.id, {
      databases: [String(SOURCE_DB)],
      testRestore: { target: { type: 'redis', database: SCRATCH_DB } },
    });
    expect(tested.status, JSON.stringify(tested.logs?.slice(-10))).toBe('Success');
    const log = JSON.stringify(tested.logs);
    // The restored index's figures (read on the agent, the owner key left out) equal the backup's: 250 + 5 with expiry.
    expect(log).toContain(`check database ${SOURCE_DB}: keys present: ok (255 keys restored, 255 recorded at backup time)`);
    expect(log).toContain(`check database ${SOURCE_DB}: key counts: ok (250 keys without expiry restored, 250 recorded`);
    expect(agentCalls('scratchWriteOwner', from)).toBe(1);
    expect(agentCalls('restore', from)).toBe(1);
    expect(agentCalls('scratchFigures', from)).toBeGreaterThanOrEqual(2);
    expect(agentCalls('scratchDropDatabase', from)).toBeGreaterThanOrEqual(1);
    // The scratch index is empty again; the backed-up index keeps its keys.
    expect(redis(SCRATCH_DB, 'DBSIZE')).toBe('0');
    expect(Number(redis(SOURCE_DB, 'DBSIZE'))).toBe(255);
  }, 240_000);
});
