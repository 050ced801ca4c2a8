// A restore tool that stops reading its input early (a SQL client that died on a damaged statement) must not leave
// the restore run waiting on the download it no longer drains: the run used to hang at 03-restore until its caller
// gave up (found with pigz-written MariaDB backups, whose damage the client saw before the SHA-256 gate could).
// `source-generated` is a TEST-ONLY adapter (support/test-adapters.ts).
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

describe('restores whose source stops reading early (libsql, local storage)', () => {
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let dir: string;
  let key: string;
  let backup: string;

  beforeAll(async () => {
    target = await createTarget('sqlite');
    server = await startEngineServer(target);
    dir = await mkdtemp(join(tmpdir(), 'hf-unread-'));
    // About 8 MiB uncompressed: far more than the buffers between the download and the source.
    server.catalog.addConfig({ configId: 'src', name: 'Generated', kind: 'source', adapterId: 'generated', config: { lines: 700_000, linesPerChunk: 5000 } });
    server.catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    server.catalog.addConfig({ configId: 'quits', name: 'Quits', kind: 'source', adapterId: 'generated', config: { restoreStopsAfterBytes: 100_000, restoreStopsWith: 'fail' } });
    server.catalog.addConfig({ configId: 'stops', name: 'Stops', kind: 'source', adapterId: 'generated', config: { restoreStopsAfterBytes: 100_000, restoreStopsWith: 'succeed' } });
    server.catalog.addJob({ id: 'job', name: 'plain', compression: 'NONE' }, 'src', [{ configId: 'disk' }]);
    key = await server.apiKey('ops', ['jobs:execute', 'history:read', 'storage:restore']);
    const trigger = await call(server.url, 'POST', '/api/jobs/job/run', { key });
    const done = await waitForEnd(server.url, key, trigger.body.executionId);
    expect(done.status, JSON.stringify(done.logs)).toBe('Success');
    backup = done.path;
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await target?.drop();
    await rm(dir, { recursive: true, force: true });
  });

  async function restoreInto(source: string): Promise<any> {
    const reply = await call(server.url, 'POST', '/api/storage/disk/restore', { key, json: { file: backup, targetSourceId: source, overwrite: true } });
    expect(reply.status, JSON.stringify(reply.body)).toBe(200);
    return waitForEnd(server.url, key, reply.body.executionId, 30_000);
  }

  it('a restore that fails after reading a little ends Failed with its own error, without waiting for the rest', async () => {
    const started = Date.now();
    const run = await restoreInto('quits');
    expect(run.status).toBe('Failed');
    expect(run.error).toMatch(/restore tool quit after \d+ bytes/);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('the same restore of a damaged backup names the damage (the stored file is re-checked)', async () => {
    const file = join(dir, backup);
    const original = await readFile(file);
    const damaged = Buffer.from(original);
    damaged[damaged.length - 10]! ^= 0x01; // past what the source reads: only the SHA-256 can see it
    await writeFile(file, damaged);
    try {
      const run = await restoreInto('quits');
      expect(run.status).toBe('Failed');
      expect(run.error).toMatch(/the backup file is corrupted: .*restore tool quit after/);
    } finally {
      await writeFile(file, original);
    }
  });

  it('a restore that reports success early still has the whole file checked: intact -> Success with a warning', async () => {
    const run = await restoreInto('stops');
    expect(run.status, JSON.stringify(run.logs)).toBe('Success');
    expect(run.logs.some((entry: { level: string; message: string }) => entry.level === 'warn' && /bytes of the backup unread/.test(entry.message))).toBe(true);
  });

  it('... and damaged past what it read -> Failed with the checksum mismatch', async () => {
    const file = join(dir, backup);
    const original = await readFile(file);
    const damaged = Buffer.from(original);
    damaged[damaged.length - 10]! ^= 0x01;
    await writeFile(file, damaged);
    try {
      const run = await restoreInto('stops');
      expect(run.status).toBe('Failed');
      expect(run.error).toMatch(/checksum mismatch/);
    } finally {
      await writeFile(file, original);
    }
  });
});
