// Issue 42, lever 1, through a whole backup run: a ZSTD (and GZIP, when pigz is installed) PostgreSQL job compressed
// by the external program restores row for row like one compressed in-process; HOLDFAST_EXTERNAL_COMPRESSOR=off
// keeps the in-process codec; a compressor that dies mid-stream fails the run with its name and leaves no file; a
// cancelled run kills its compressor (no process left, not even a zombie).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { findOnPath } from '../src/codec/compression/external-compressor.js';
import { restoreCompressorEnvironmentAfterEach } from './support/child-processes.js';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

const sql = (database: string, text: string): string =>
  execFileSync('psql', ['-h', '127.0.0.1', '-U', 'root', '-d', database, '-v', 'ON_ERROR_STOP=1', '-tAc', text], { encoding: 'utf8' }).trim();
const fingerprint = (database: string): string => sql(database, `SELECT count(*) || ':' || md5(string_agg(t::text, ',' ORDER BY id)) FROM items t`);
const logText = (execution: { logs?: unknown }): string => JSON.stringify(execution.logs ?? []);

describe.skipIf(!findOnPath('zstd'))('backups compressed by an external program (skipped without zstd on PATH)', () => {
  const suffix = randomBytes(4).toString('hex');
  const sourceDb = `hf_xsrc_${suffix}`;
  const restored: string[] = [];
  const savedPath = process.env.PATH;
  restoreCompressorEnvironmentAfterEach();
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let dir: string;
  let key: string;

  beforeAll(async () => {
    sql('postgres', `CREATE DATABASE ${sourceDb}`);
    sql(sourceDb, `CREATE TABLE items (id int PRIMARY KEY, label text, body text);
      INSERT INTO items SELECT g, 'item ' || g, md5(g::text) || repeat(' line ' || (g % 50), 6) FROM generate_series(1, 40000) g;`);
    target = await createTarget('sqlite');
    server = await startEngineServer(target);
    dir = await mkdtemp(join(tmpdir(), 'hf-external-run-'));
    await mkdir(join(dir, 'store'));
    server.catalog.addConfig({ configId: 'pg', name: 'Local PostgreSQL', kind: 'source', adapterId: 'postgres', config: { host: '127.0.0.1', user: 'root' } });
    server.catalog.addConfig({ configId: 'local', name: 'Local disk', kind: 'storage', adapterId: 'local', config: { path: join(dir, 'store') } });
    server.catalog.addJob({ id: 'zstd-job', name: 'zstd shop', databases: [sourceDb], compression: 'ZSTD' }, 'pg', [{ configId: 'local' }]);
    server.catalog.addJob({ id: 'gzip-job', name: 'gzip shop', databases: [sourceDb], compression: 'GZIP' }, 'pg', [{ configId: 'local' }]);
    key = await server.apiKey('ci', ['jobs:execute', 'history:read', 'storage:restore']);
  }, 180_000);

  // On by default; set explicitly so an environment that switched it off does not change these tests.
  beforeEach(() => {
    process.env.HOLDFAST_EXTERNAL_COMPRESSOR = 'on';
  });

  afterAll(async () => {
    await server?.close();
    await target?.drop();
    if (dir) await rm(dir, { recursive: true, force: true });
    for (const database of [sourceDb, ...restored]) sql('postgres', `DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
  });

  async function backup(jobId: string): Promise<any> {
    const trigger = await call(server.url, 'POST', `/api/jobs/${jobId}/run`, { key });
    expect(trigger.status).toBe(200);
    return waitForEnd(server.url, key, trigger.body.executionId, 120_000);
  }

  async function restoreAndCompare(path: string): Promise<void> {
    const database = `hf_xr${restored.length}_${suffix}`;
    restored.push(database);
    const restore = await call(server.url, 'POST', '/api/storage/local/restore', { key, json: { file: path, database } });
    expect(restore.status).toBe(200);
    const done = await waitForEnd(server.url, key, restore.body.executionId, 120_000);
    expect(done.status, logText(done)).toBe('Success');
    expect(fingerprint(database)).toBe(fingerprint(sourceDb));
  }

  it('ZSTD: the external zstd and the in-process codec (switch off) both restore row for row', async () => {
    process.env.HOLDFAST_EXTERNAL_COMPRESSOR = 'on';
    const external = await backup('zstd-job');
    expect(external.status, logText(external)).toBe('Success');
    expect(logText(external)).toContain('compressing with zstd -3 -T0 (external program)');

    process.env.HOLDFAST_EXTERNAL_COMPRESSOR = 'off';
    const inProcess = await backup('zstd-job');
    expect(inProcess.status, logText(inProcess)).toBe('Success');
    expect(logText(inProcess)).not.toContain('external program');

    expect(fingerprint(sourceDb)).toMatch(/^40000:/);
    await restoreAndCompare(external.path);
    await restoreAndCompare(inProcess.path);
  });

  it.skipIf(!findOnPath('pigz'))('GZIP: pigz output restores row for row (skipped without pigz on PATH)', async () => {
    const external = await backup('gzip-job');
    expect(external.status, logText(external)).toBe('Success');
    expect(logText(external)).toContain('compressing with pigz -3 (external program)');
    await restoreAndCompare(external.path);
  });

  it('a compressor that dies mid-stream fails the run with its name and status, and leaves no file', async () => {
    const fakeBin = join(dir, 'fake-bin');
    await mkdir(fakeBin, { recursive: true });
    await writeFile(join(fakeBin, 'zstd'), '#!/bin/sh\nhead -c 65536 >/dev/null\necho "simulated compressor failure" >&2\nexit 3\n');
    await chmod(join(fakeBin, 'zstd'), 0o755);
    const before = new Set(await readdir(join(dir, 'store')));
    process.env.PATH = `${fakeBin}${delimiter}${savedPath}`;
    const failed = await backup('zstd-job');
    expect(failed.status).toBe('Failed');
    expect(logText(failed)).toMatch(/zstd -3 -T0 exited with status 3: simulated compressor failure/);
    const after = (await readdir(join(dir, 'store'))).filter((name) => !before.has(name));
    expect(after).toEqual([]);
  });

  it('cancelling a run kills its compressor: no process is left, not even a zombie', async () => {
    const fakeBin = join(dir, 'stuck-bin');
    const pidFile = join(dir, 'stuck-zstd.pid');
    await mkdir(fakeBin, { recursive: true });
    // Never reads its input: the run stays in its upload stage until it is cancelled.
    await writeFile(join(fakeBin, 'zstd'), `#!/bin/sh\necho $$ > '${pidFile}'\nexec sleep 300\n`);
    await chmod(join(fakeBin, 'zstd'), 0o755);
    const before = new Set(await readdir(join(dir, 'store')));
    process.env.PATH = `${fakeBin}${delimiter}${savedPath}`;
    const trigger = await call(server.url, 'POST', '/api/jobs/zstd-job/run', { key });
    expect(trigger.status).toBe(200);
    let pid = 0;
    for (let attempt = 0; attempt < 300 && !pid; attempt++) {
      pid = Number((await readFile(pidFile, 'utf8').catch(() => '')).trim()) || 0;
      if (!pid) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(pid).toBeGreaterThan(0);
    const cancel = await call(server.url, 'POST', `/api/executions/${trigger.body.executionId}/cancel`, { key });
    expect(cancel.status).toBe(200);
    const done = await waitForEnd(server.url, key, trigger.body.executionId, 60_000);
    expect(done.status).toBe('Cancelled');
    // Reaped: signal 0 fails with ESRCH once the process is gone and waited for (a zombie would still answer).
    let alive = true;
    for (let attempt = 0; attempt < 100 && alive; attempt++) {
      try {
        process.kill(pid, 0);
        await new Promise((resolve) => setTimeout(resolve, 50));
      } catch {
        alive = false;
      }
    }
    expect(alive).toBe(false);
    expect((await readdir(join(dir, 'store'))).filter((name) => !before.has(name))).toEqual([]);
  });
});
