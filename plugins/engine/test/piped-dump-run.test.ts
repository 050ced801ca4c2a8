// Issue 42: a directory backup compressed by an external zstd is written by the directory source's own child process
// straight into zstd's stdin (DumpOptions.compressorInput), through a whole backup run. The stored backup holds the
// same tar as one written in-process (switch off), extracts to the same files, and a writer that dies half-way fails
// the run and leaves nothing stored, although zstd saw a clean end of its input; a cancel leaves no writer running.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AnyAdapterDefinition } from '@holdfast/kernel';
import sourceDirectory from '@holdfast/source-directory';
import { findOnPath } from '../src/codec/compression/external-compressor.js';
import { filesOf, processesMatching, restoreCompressorEnvironmentAfterEach, sha256 } from './support/child-processes.js';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

const logText = (execution: { logs?: unknown }): string => JSON.stringify(execution.logs ?? []);

/** Archive writers still running for `root` (its path is on their command line). */
const writersOf = (root: string): string[] => processesMatching(`pack-child.js.*${root}`);

/** The archive writers for `root` once one runs (polled for 2 s). */
async function writersStarted(root: string): Promise<string[]> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const writers = writersOf(root);
    if (writers.length > 0) return writers;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return [];
}

describe.skipIf(!findOnPath('zstd'))('directory backups written by the source\'s own process into zstd (skipped without zstd on PATH)', () => {
  const savedPath = process.env.PATH;
  restoreCompressorEnvironmentAfterEach();
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let dir: string;
  let data: string;
  let key: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hf-piped-run-'));
    data = join(dir, 'data');
    await mkdir(join(data, 'nested', 'deeper'), { recursive: true });
    for (let index = 0; index < 40; index++) await writeFile(join(data, 'nested', `small-${index}.txt`), `file ${index} `.repeat(index * 50));
    await writeFile(join(data, 'nested', 'deeper', 'large.bin'), randomBytes(6 * 1024 * 1024));
    await writeFile(join(data, 'empty'), '');
    await mkdir(join(dir, 'store'));
    target = await createTarget('sqlite');
    server = await startEngineServer(target, { adapters: [sourceDirectory] as unknown as AnyAdapterDefinition[] });
    server.catalog.addConfig({ configId: 'files', name: 'Files', kind: 'source', adapterId: 'directory', config: { paths: [data] } });
    server.catalog.addConfig({ configId: 'local', name: 'Local disk', kind: 'storage', adapterId: 'local', config: { path: join(dir, 'store') } });
    server.catalog.addJob({ id: 'files-job', name: 'files', databases: [], compression: 'ZSTD' }, 'files', [{ configId: 'local' }]);
    key = await server.apiKey('ci', ['jobs:execute', 'history:read']);
  }, 120_000);

  afterAll(async () => {
    await server?.close();
    await target?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function backup(): Promise<any> {
    const trigger = await call(server.url, 'POST', '/api/jobs/files-job/run', { key });
    expect(trigger.status).toBe(200);
    return waitForEnd(server.url, key, trigger.body.executionId, 120_000);
  }

  const tarOf = (path: string): Buffer => execFileSync('zstd', ['-dc', join(dir, 'store', path)], { maxBuffer: 64 * 1024 * 1024 });

  it('stores the same tar as the in-process writer, and it extracts to the same files', async () => {
    process.env.HOLDFAST_EXTERNAL_COMPRESSOR = 'on';
    const piped = await backup();
    expect(piped.status, logText(piped)).toBe('Success');
    expect(logText(piped)).toContain('compressing with zstd -3 -T0 (external program, fed by the source directly)');
    process.env.HOLDFAST_EXTERNAL_COMPRESSOR = 'off';
    const inProcess = await backup();
    expect(inProcess.status, logText(inProcess)).toBe('Success');
    expect(logText(inProcess)).not.toContain('fed by the source directly');
    const pipedTar = tarOf(piped.path);
    expect(pipedTar.length).toBeGreaterThan(6 * 1024 * 1024);
    expect(sha256(pipedTar)).toBe(sha256(tarOf(inProcess.path)));
    const extracted = join(dir, 'extracted');
    await mkdir(extracted);
    execFileSync('tar', ['-x', '-C', extracted], { input: pipedTar });
    const restored = await filesOf(join(extracted, '0-data'));
    expect(Object.keys(restored)).toHaveLength(42);
    expect(restored).toEqual(await filesOf(data));
  });

  it('a writer killed half-way fails the run, and nothing is stored although zstd ended cleanly', async () => {
    // zstd waits before reading, so the writer is still blocked on the full pipe when it is killed.
    const slowBin = join(dir, 'slow-bin');
    await mkdir(slowBin, { recursive: true });
    await writeFile(join(slowBin, 'zstd'), `#!/bin/sh\nsleep 2\nexec '${findOnPath('zstd')}' "$@"\n`);
    await chmod(join(slowBin, 'zstd'), 0o755);
    const before = new Set(await readdir(join(dir, 'store')));
    process.env.PATH = `${slowBin}${delimiter}${savedPath}`;
    const trigger = await call(server.url, 'POST', '/api/jobs/files-job/run', { key });
    expect(trigger.status).toBe(200);
    const writers = await writersStarted(data);
    expect(writers).toHaveLength(1);
    process.kill(Number(writers[0]), 'SIGKILL');
    const failed = await waitForEnd(server.url, key, trigger.body.executionId, 60_000);
    expect(failed.status).toBe('Failed');
    expect(logText(failed)).toContain('03-upload failed: [source-directory] dump failed: the archive writer was killed by SIGKILL');
    // The put itself was aborted (with the writer's failure or as aborted): zstd's clean end never completed it.
    expect(logText(failed)).toMatch(/destination Local disk failed: (\[source-directory\] dump failed: the archive writer was killed|.*aborted)/);
    expect((await readdir(join(dir, 'store'))).filter((name) => !before.has(name))).toEqual([]);
  });

  it('cancelling a run stops its writer: no writer process is left', async () => {
    const stuckBin = join(dir, 'stuck-bin');
    await mkdir(stuckBin, { recursive: true });
    // Never reads: the writer blocks on the full pipe until the cancel.
    await writeFile(join(stuckBin, 'zstd'), '#!/bin/sh\nexec sleep 300\n');
    await chmod(join(stuckBin, 'zstd'), 0o755);
    process.env.PATH = `${stuckBin}${delimiter}${savedPath}`;
    const trigger = await call(server.url, 'POST', '/api/jobs/files-job/run', { key });
    expect(trigger.status).toBe(200);
    const writers = await writersStarted(data);
    expect(writers).toHaveLength(1);
    const cancel = await call(server.url, 'POST', `/api/executions/${trigger.body.executionId}/cancel`, { key });
    expect(cancel.status).toBe(200);
    const done = await waitForEnd(server.url, key, trigger.body.executionId, 60_000);
    expect(done.status).toBe('Cancelled');
    expect(writersOf(data)).toEqual([]);
  });
});
