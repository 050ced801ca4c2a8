// Issue 42: a directory restore of a ZSTD backup is decoded by `zstd -d` in a child process and extracted by the
// directory source's own child process (RestoreOptions.decodedInput), through whole restore runs on the real engine.
// The restored tree equals the backed-up one (and the in-process restore's); a backup whose bytes do not match the
// sidecar's SHA-256, though they decode cleanly, is staged but never moved into place; a cancel leaves no extractor
// and no staging behind.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyAdapterDefinition } from '@holdfast/kernel';
import sourceDirectory from '@holdfast/source-directory';
import { findOnPath } from '../src/codec/compression/external-compressor.js';
import { filesOf, processesMatching, restoreCompressorEnvironmentAfterEach } from './support/child-processes.js';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

const logText = (execution: { logs?: unknown }): string => JSON.stringify(execution.logs ?? []);
const PIPED_LINE = 'decompressing with zstd -d (external program, into the source directly)';

/** Extractor processes still running for `target` (its path is on their command line). */
const extractorsOf = (target: string): string[] => processesMatching(`restore-child.js.*${target}`);

describe.skipIf(!findOnPath('zstd'))('directory restores decoded by zstd and extracted by the source\'s own process (skipped without zstd on PATH)', () => {
  const savedPath = process.env.PATH;
  restoreCompressorEnvironmentAfterEach();
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let dir: string;
  let data: string;
  let restores: string;
  let key: string;
  let backupPath: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hf-piped-restore-'));
    data = join(dir, 'data');
    restores = join(dir, 'restores');
    await mkdir(join(data, 'nested', 'deeper'), { recursive: true });
    await mkdir(restores);
    for (let index = 0; index < 40; index++) await writeFile(join(data, 'nested', `small-${index}.txt`), `file ${index} `.repeat(index * 50));
    await writeFile(join(data, 'nested', 'deeper', 'large.bin'), randomBytes(6 * 1024 * 1024));
    await writeFile(join(data, 'empty'), '');
    await mkdir(join(dir, 'store'));
    target = await createTarget('sqlite');
    server = await startEngineServer(target, { adapters: [sourceDirectory] as unknown as AnyAdapterDefinition[] });
    server.catalog.addConfig({ configId: 'files', name: 'Files', kind: 'source', adapterId: 'directory', config: { paths: [data] } });
    server.catalog.addConfig({ configId: 'local', name: 'Local disk', kind: 'storage', adapterId: 'local', config: { path: join(dir, 'store') } });
    server.catalog.addJob({ id: 'files-job', name: 'files', databases: [], compression: 'ZSTD' }, 'files', [{ configId: 'local' }]);
    key = await server.apiKey('ci', ['jobs:execute', 'history:read', 'storage:restore']);
    const trigger = await call(server.url, 'POST', '/api/jobs/files-job/run', { key });
    expect(trigger.status).toBe(200);
    const backup = await waitForEnd(server.url, key, trigger.body.executionId, 120_000);
    expect(backup.status, logText(backup)).toBe('Success');
    backupPath = backup.path as string;
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    await target?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function startRestore(into: string, file = backupPath): Promise<string> {
    // overwrite: a folder that holds files of other names keeps them (the forged backup's target holds one).
    const answer = await call(server.url, 'POST', '/api/storage/local/restore', { key, json: { file, targetPath: into, overwrite: true } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    return answer.body.executionId as string;
  }
  const restoreInto = async (into: string, file = backupPath): Promise<any> => waitForEnd(server.url, key, await startRestore(into, file), 120_000);
  const stagingLeft = async (): Promise<string[]> => (await readdir(restores)).filter((name) => name.startsWith('.'));

  it('restores the backed-up files through zstd and the extractor, as the in-process restore does', async () => {
    process.env.HOLDFAST_EXTERNAL_COMPRESSOR = 'on';
    const piped = await restoreInto(join(restores, 'piped'));
    expect(piped.status, logText(piped)).toBe('Success');
    expect(logText(piped)).toContain(PIPED_LINE);
    const restored = await filesOf(join(restores, 'piped', '0-data'));
    expect(Object.keys(restored)).toHaveLength(42);
    expect(restored).toEqual(await filesOf(data));
    process.env.HOLDFAST_EXTERNAL_COMPRESSOR = 'off';
    const inProcess = await restoreInto(join(restores, 'in-process'));
    expect(inProcess.status, logText(inProcess)).toBe('Success');
    expect(logText(inProcess)).not.toContain(PIPED_LINE);
    expect(await filesOf(join(restores, 'in-process', '0-data'))).toEqual(restored);
    expect(await stagingLeft()).toEqual([]);
  });

  it('bytes that decode cleanly but do not match the sidecar\'s SHA-256 are never moved into place', async () => {
    process.env.HOLDFAST_EXTERNAL_COMPRESSOR = 'on';
    // A second copy of the backup whose sidecar records another SHA-256: zstd and tar read it without complaint. A
    // 4 MiB skippable zstd frame at its end (zstd passes over it) keeps the checksum's verdict back until zstd has
    // written the whole tar, so the extractor has staged everything and asks to commit before the engine says no.
    const store = join(dir, 'store');
    const forged = backupPath.replace(/(\.tar\.zst)$/, '-forged$1');
    const skippable = Buffer.alloc(8);
    skippable.writeUInt32LE(0x184d2a50, 0);
    skippable.writeUInt32LE(4 * 1024 * 1024, 4);
    await writeFile(join(store, forged), Buffer.concat([await readFile(join(store, backupPath)), skippable, randomBytes(4 * 1024 * 1024)]));
    const sidecar = JSON.parse(await readFile(join(store, `${backupPath}.meta.json`), 'utf8'));
    await writeFile(join(store, `${forged}.meta.json`), JSON.stringify({ ...sidecar, sha256: 'f'.repeat(64) }));
    const into = join(restores, 'forged');
    await mkdir(into);
    await writeFile(join(into, 'kept.txt'), 'was here');
    const failed = await restoreInto(into, forged);
    expect(failed.status, logText(failed)).toBe('Failed');
    expect(logText(failed)).toContain(PIPED_LINE);
    expect(logText(failed)).toMatch(/restore failed: checksum mismatch: the file's SHA-256 is [0-9a-f]{64}, the sidecar records f{64}/);
    expect(await readdir(into)).toEqual(['kept.txt']);
    expect(await stagingLeft()).toEqual([]);
    expect(extractorsOf(into)).toEqual([]);
  });

  it('cancelling a restore stops zstd and the extractor: nothing restored, no staging, no process', async () => {
    // A decoder that never writes: the extractor waits on its stdin until the cancel.
    const stuckBin = join(dir, 'stuck-bin');
    await mkdir(stuckBin, { recursive: true });
    await writeFile(join(stuckBin, 'zstd'), '#!/bin/sh\nexec sleep 300\n');
    await chmod(join(stuckBin, 'zstd'), 0o755);
    process.env.HOLDFAST_EXTERNAL_COMPRESSOR = 'on';
    process.env.PATH = `${stuckBin}${delimiter}${savedPath}`;
    const into = join(restores, 'cancelled');
    const executionId = await startRestore(into);
    for (let attempt = 0; attempt < 100 && extractorsOf(into).length === 0; attempt++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(extractorsOf(into)).toHaveLength(1);
    const cancel = await call(server.url, 'POST', `/api/executions/${executionId}/cancel`, { key });
    expect(cancel.status).toBe(200);
    const done = await waitForEnd(server.url, key, executionId, 60_000);
    expect(done.status).toBe('Cancelled');
    expect(extractorsOf(into)).toEqual([]);
    expect(await readdir(into).catch(() => [])).toEqual([]);
    expect(await stagingLeft()).toEqual([]);
  });
});
