import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

describe('backup runs over HTTP (libsql)', () => {
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let dirs: string[];
  let key: string;

  beforeEach(async () => {
    target = await createTarget('sqlite');
    server = await startEngineServer(target);
    dirs = [await mkdtemp(join(tmpdir(), 'hf-dest-a-')), await mkdtemp(join(tmpdir(), 'hf-dest-b-'))];
    server.catalog.addConfig({ configId: 'src', name: 'Generated', kind: 'source', adapterId: 'generated', config: { lines: 20_000 } });
    server.catalog.addConfig({ configId: 'dest-a', name: 'Disk A', kind: 'storage', adapterId: 'local', config: { path: dirs[0] } });
    server.catalog.addConfig({ configId: 'dest-b', name: 'Disk B', kind: 'storage', adapterId: 'local', config: { path: dirs[1] } });
    key = await server.apiKey('ci-pipeline', ['jobs:execute', 'history:read', 'jobs:read', 'storage:restore']);
  });

  afterEach(async () => {
    await server.close();
    await target.drop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('writes the same encrypted, compressed file and sidecar to every destination and restores it', async () => {
    const profileKey = randomBytes(32);
    server.catalog.addJob({ id: 'job-1', name: 'nightly', compression: 'GZIP' }, 'src', [{ configId: 'dest-b', priority: 1 }, { configId: 'dest-a', priority: 0 }], { profileId: 'vault-1', key: profileKey });
    const trigger = await call(server.url, 'POST', '/api/jobs/job-1/run', { key, json: { lock: true } });
    expect(trigger.status).toBe(200);
    expect(trigger.body).toEqual({ success: true, executionId: expect.any(String), message: expect.any(String) });
    const done = await waitForEnd(server.url, key, trigger.body.executionId);
    expect(done.status, JSON.stringify(done.logs)).toBe('Success');
    expect(done.path).toMatch(/^nightly_\d{4}-\d{2}-\d{2}_\d{2}-\d{2}-\d{2}\.txt\.gz\.enc$/);
    const files = await Promise.all(dirs.map(async (dir) => (await readdir(dir)).sort()));
    expect(files[0]).toEqual([done.path, `${done.path}.meta.json`]);
    expect(files[1]).toEqual(files[0]);
    const [a, b] = await Promise.all(dirs.map((dir) => readFile(join(dir, done.path))));
    expect(sha256(a!)).toBe(sha256(b!));
    expect(a!.subarray(0, 5).toString()).toBe('HFENC');
    expect(done.size).toBe(a!.length);
    const sidecar = JSON.parse(await readFile(join(dirs[0]!, `${done.path}.meta.json`), 'utf8'));
    expect(sidecar).toMatchObject({
      formatVersion: 1,
      sha256: sha256(a!),
      size: a!.length,
      locked: true,
      trigger: { type: 'Api', actor: 'ci-pipeline' },
      compression: { codec: 'GZIP', extension: '.gz' },
      encryption: { algorithm: 'AES-256-GCM', profileId: 'vault-1' },
      source: { adapterId: 'generated', configId: 'src' },
      jobId: 'job-1',
      jobName: 'nightly',
      executionId: done.id,
    });
    expect(sidecar.md5).toBe(createHash('md5').update(a!).digest('hex'));
    expect(server.audit.entries).toContainEqual(expect.objectContaining({ action: 'execute', resource: 'job', resourceId: 'job-1', details: expect.objectContaining({ trigger: 'api' }) }));

    const restoreTo = join(dirs[0]!, '..', `restored-${done.id}.txt`);
    server.catalog.addConfig({ configId: 'restore-target', name: 'Restore target', kind: 'source', adapterId: 'generated', config: { restoreTo } });
    const restore = await call(server.url, 'POST', '/api/storage/dest-b/restore', { key, json: { file: done.path, targetSourceId: 'restore-target', overwrite: true } });
    expect(restore.status).toBe(200);
    const restored = await waitForEnd(server.url, key, restore.body.executionId);
    expect(restored.status, JSON.stringify(restored.logs)).toBe('Success');
    expect(restored.type).toBe('Restore');
    const text = await readFile(restoreTo, 'utf8');
    await rm(restoreTo);
    expect(text.split('\n')).toHaveLength(20_001);
    expect(text.startsWith('line 0\nline 1\n')).toBe(true);
  });

  it('fails a restore whose file does not match the SHA-256 in its sidecar', async () => {
    server.catalog.addJob({ id: 'plain', name: 'plain' }, 'src', [{ configId: 'dest-a' }]);
    const trigger = await call(server.url, 'POST', '/api/jobs/plain/run', { key });
    const done = await waitForEnd(server.url, key, trigger.body.executionId);
    expect(done.status).toBe('Success');
    const file = join(dirs[0]!, done.path);
    const bytes = await readFile(file);
    bytes[100] = bytes[100]! ^ 0xff;
    await writeFile(file, bytes);
    const restoreTo = join(dirs[1]!, 'restored.txt');
    server.catalog.addConfig({ configId: 'restore-target', name: 'Restore target', kind: 'source', adapterId: 'generated', config: { restoreTo } });
    const restore = await call(server.url, 'POST', '/api/storage/dest-a/restore', { key, json: { file: done.path, targetSourceId: 'restore-target', overwrite: true } });
    const restored = await waitForEnd(server.url, key, restore.body.executionId);
    expect(restored.status).toBe('Failed');
    expect(restored.error).toMatch(/checksum mismatch/);
  });

  it('answers 404 for a restore from an unknown storage and 400 without a file', async () => {
    expect((await call(server.url, 'POST', '/api/storage/nope/restore', { key, json: { file: 'x.dump' } })).status).toBe(404);
    expect((await call(server.url, 'POST', '/api/storage/dest-a/restore', { key, json: {} })).status).toBe(400);
  });
});
