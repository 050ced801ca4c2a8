// Issue 19 acceptance 3: post-upload verification. A destination that silently stores other bytes (a test double,
// see support/verification-adapters.ts) makes the run Partial and is named; `skipVerification` skips the read-back
// (observed: no GET of the backup at the destination); a destination declaring a server checksum is verified
// without reading the object.
import { readFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnyAdapterDefinition } from '@holdfast/kernel';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';
import { bucket, checksummingStorage, corruptingStorage, recordingStorage } from './support/verification-adapters.js';

describe('post-upload verification', () => {
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let key: string;
  let localDir: string;

  beforeAll(async () => {
    target = await createTarget('sqlite');
    server = await startEngineServer(target, { adapters: [corruptingStorage, recordingStorage, checksummingStorage] as unknown as AnyAdapterDefinition[] });
    localDir = await mkdtemp(join(tmpdir(), 'hf-verify-local-'));
    server.catalog.addConfig({ configId: 'gen', name: 'Generated', kind: 'source', adapterId: 'generated', config: { lines: 5000 } });
    server.catalog.addConfig({ configId: 'local', name: 'Local disk', kind: 'storage', adapterId: 'local', config: { path: localDir } });
    server.catalog.addConfig({ configId: 'bad', name: 'Bit-rot bucket', kind: 'storage', adapterId: 'corrupting', config: { bucket: 'bad' } });
    server.catalog.addConfig({ configId: 'rec', name: 'Recorded bucket', kind: 'storage', adapterId: 'recording', config: { bucket: 'rec' } });
    server.catalog.addConfig({ configId: 'sum', name: 'Checksum bucket', kind: 'storage', adapterId: 'checksumming', config: { bucket: 'sum' } });
    key = await server.apiKey('verify', ['jobs:execute', 'history:read']);
  });

  afterAll(async () => {
    await server?.close();
    await target?.drop();
    await rm(localDir, { recursive: true, force: true });
  });

  async function run(jobId: string): Promise<any> {
    const trigger = await call(server.url, 'POST', `/api/jobs/${jobId}/run`, { key });
    expect(trigger.status).toBe(200);
    return waitForEnd(server.url, key, trigger.body.executionId);
  }

  it('a destination that silently stores a different object makes the run Partial and is named', async () => {
    server.catalog.addJob({ id: 'corrupt-job', name: 'corrupt', compression: 'GZIP' }, 'gen', [{ configId: 'local' }, { configId: 'bad', priority: 1 }]);
    const done = await run('corrupt-job');
    expect(done.status).toBe('Partial');
    const messages = done.logs.map((entry: { message: string }) => entry.message);
    expect(messages).toContainEqual(expect.stringMatching(/destination Bit-rot bucket: verification failed: checksum mismatch/));
    expect(messages).toContainEqual('destination Local disk: verified (streamed-sha256)');
    const sidecar = JSON.parse(await readFile(join(localDir, `${done.path}.meta.json`), 'utf8'));
    expect(sidecar.verification).toMatchObject({ status: 'verified', method: 'streamed-sha256' });
    const badSidecar = JSON.parse(bucket('bad').objects.get(`${done.path}.meta.json`)!.data.toString('utf8'));
    expect(badSidecar.verification.status).toBe('mismatch');
    expect(bucket('bad').gets).toContain(done.path);
  });

  it('without skipVerification the backup is read back at the destination; with it, no GET of the backup happens', async () => {
    server.catalog.addJob({ id: 'read-job', name: 'read' }, 'gen', [{ configId: 'rec' }]);
    const verified = await run('read-job');
    expect(verified.status).toBe('Success');
    expect(bucket('rec').gets).toContain(verified.path);

    bucket('rec').gets.length = 0;
    server.catalog.addJob({ id: 'skip-job', name: 'skip', skipVerification: true }, 'gen', [{ configId: 'rec' }]);
    const skipped = await run('skip-job');
    expect(skipped.status).toBe('Success');
    expect(bucket('rec').gets.filter((read) => read === skipped.path)).toEqual([]);
    const sidecar = JSON.parse(bucket('rec').objects.get(`${skipped.path}.meta.json`)!.data.toString('utf8'));
    expect(sidecar.verification).toEqual({ status: 'skipped' });
    expect(skipped.logs.map((entry: { message: string }) => entry.message)).toContain('post-upload verification skipped (the job sets skipVerification)');
  });

  it('skipVerification also keeps a corrupting destination unnoticed (the run is Success): the flag really skips the check', async () => {
    server.catalog.addJob({ id: 'skip-bad', name: 'skip bad', skipVerification: true }, 'gen', [{ configId: 'bad' }]);
    const done = await run('skip-bad');
    expect(done.status).toBe('Success');
  });

  it('a destination with a server-side checksum is verified without reading the object back', async () => {
    server.catalog.addJob({ id: 'sum-job', name: 'sum' }, 'gen', [{ configId: 'sum' }]);
    const done = await run('sum-job');
    expect(done.status).toBe('Success');
    expect(done.logs.map((entry: { message: string }) => entry.message)).toContain('destination Checksum bucket: verified (server-checksum)');
    expect(bucket('sum').gets.filter((read) => read === done.path)).toEqual([]);
  });
});
