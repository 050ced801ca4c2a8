// Issue 19 acceptance 2: test restores of a PostgreSQL job and of a directory job run end to end on the local
// servers (engine on a real PostgreSQL; backups on local disk), record their duration as the job's measured restore
// time, leave no scratch database or directory behind, and a corrupted backup fails with a clear message (and
// notifies like a failed backup).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AnyAdapterDefinition, HoldfastEvents } from '@holdfast/kernel';
import { TOKENS } from '@holdfast/kernel';
import sourceDirectory from '@holdfast/source-directory';
import sourceMysql from '@holdfast/source-mysql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

const sql = (database: string, text: string): string =>
  execFileSync('psql', ['-h', '127.0.0.1', '-U', 'root', '-d', database, '-v', 'ON_ERROR_STOP=1', '-tAc', text], { encoding: 'utf8' }).trim();
const mariadb = (text: string): string => execFileSync('mariadb', ['-h', '127.0.0.1', '-u', 'root', '-N', '-B', '-e', text], { encoding: 'utf8' }).trim();
const tagOf = (executionId: string): string => executionId.replace(/-/g, '').slice(0, 12);
/** Scratch databases of one test restore (other suites may run test restores on the same server at the same time). */
const scratchDatabases = (executionId: string): string[] =>
  sql('postgres', `SELECT datname FROM pg_database WHERE datname LIKE 'hf_test_restore_${tagOf(executionId)}_%'`).split('\n').filter(Boolean);

describe('test restores (engine on PostgreSQL, local storage)', () => {
  const suffix = randomBytes(4).toString('hex');
  const sourceDb = `hf_trsrc_${suffix}`;
  const mysqlDb = `hf_trmy_${suffix}`;
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let work: string;
  let key: string;
  const failures: HoldfastEvents['backup_failure'][] = [];

  const messages = (execution: any): string[] => execution.logs.map((entry: { message: string }) => entry.message);

  async function run(path: string): Promise<any> {
    const trigger = await call(server.url, 'POST', path, { key });
    expect(trigger.status, JSON.stringify(trigger.body)).toBe(200);
    return waitForEnd(server.url, key, trigger.body.executionId, 120_000);
  }

  beforeAll(async () => {
    sql('postgres', `CREATE DATABASE ${sourceDb}`);
    sql(sourceDb, `CREATE TABLE customers (id int PRIMARY KEY, name text);
      INSERT INTO customers SELECT g, 'customer ' || g FROM generate_series(1, 5000) g;
      CREATE SCHEMA sales; CREATE TABLE sales.orders (id int PRIMARY KEY, total numeric(10,2));
      INSERT INTO sales.orders SELECT g, g * 1.5 FROM generate_series(1, 1234) g;`);
    mariadb(`CREATE DATABASE ${mysqlDb}; USE ${mysqlDb}; CREATE TABLE items (id INT PRIMARY KEY, label VARCHAR(40));
      INSERT INTO items SELECT seq, CONCAT('item ', seq) FROM seq_1_to_777; CREATE TABLE empty_one (id INT);`);
    target = await createTarget('postgresql');
    server = await startEngineServer(target, { adapters: [sourceDirectory, sourceMysql] as unknown as AnyAdapterDefinition[] });
    server.handle.container.resolve(TOKENS.EventBus).on('backup_failure', (event) => void failures.push(event));
    work = await mkdtemp(join(tmpdir(), 'hf-test-restore-'));
    await mkdir(join(work, 'storage'));
    await mkdir(join(work, 'tree', 'nested'), { recursive: true });
    await mkdir(join(work, 'scratch'));
    await writeFile(join(work, 'tree', 'a.txt'), 'alpha\n');
    await writeFile(join(work, 'tree', 'nested', 'b.bin'), randomBytes(70_000));
    await writeFile(join(work, 'tree', 'nested', 'c.txt'), '');
    server.catalog.addConfig({ configId: 'pg', name: 'Local PostgreSQL', kind: 'source', adapterId: 'postgres', config: { host: '127.0.0.1', user: 'root' } });
    server.catalog.addConfig({ configId: 'dir', name: 'Tree', kind: 'source', adapterId: 'directory', config: { paths: [join(work, 'tree')] } });
    server.catalog.addConfig({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: join(work, 'storage') } });
    server.catalog.addJob({ id: 'pg-job', name: 'shop', databases: [sourceDb], compression: 'GZIP', testRestore: { target: { type: 'database' } } }, 'pg', [{ configId: 'disk' }], { profileId: 'vault', key: randomBytes(32) });
    server.catalog.addJob({ id: 'dir-job', name: 'tree', compression: 'ZSTD', testRestore: { target: { type: 'directory', path: join(work, 'scratch') } } }, 'dir', [{ configId: 'disk' }]);
    server.catalog.addConfig({ configId: 'maria', name: 'Local MariaDB', kind: 'source', adapterId: 'mysql', config: { host: '127.0.0.1', user: 'root' } });
    server.catalog.addJob({ id: 'maria-job', name: 'maria', databases: [mysqlDb], compression: 'GZIP', testRestore: { target: { type: 'database' } } }, 'maria', [{ configId: 'disk' }]);
    server.catalog.addJob({ id: 'plain-job', name: 'no scratch' }, 'pg', [{ configId: 'disk' }]);
    key = await server.apiKey('rto', ['jobs:execute', 'jobs:read', 'history:read', 'dashboard:read']);
  });

  afterAll(async () => {
    await server?.close();
    await target?.drop();
    await rm(work, { recursive: true, force: true });
    sql('postgres', `DROP DATABASE IF EXISTS ${sourceDb} WITH (FORCE)`);
    mariadb(`DROP DATABASE IF EXISTS ${mysqlDb}`);
  });

  it('PostgreSQL: restores the newest backup into a throwaway database, checks row counts, drops it, records the RTO', async () => {
    const backup = await run('/api/jobs/pg-job/run');
    expect(backup.status, JSON.stringify(backup.logs)).toBe('Success');
    const sidecar = JSON.parse(await readFile(join(work, 'storage', `${backup.path}.meta.json`), 'utf8'));
    expect(sidecar.figures.databases[sourceDb]).toEqual({ 'public.customers': 5000, 'sales.orders': 1234 });

    // A scratch database left by an execution of ours that has ended (as a crash leaves it: the orphan reaper marks
    // the run Failed) is dropped by the next test restore; one no execution of ours owns (another installation on
    // the same server) is left alone.
    const leftover = `hf_test_restore_${tagOf(backup.id)}_0`;
    sql('postgres', `CREATE DATABASE ${leftover}`);
    sql('postgres', 'CREATE DATABASE hf_test_restore_000000000000_0');
    const tested = await run('/api/jobs/pg-job/test-restore');
    expect(tested.status, JSON.stringify(tested.logs)).toBe('Success');
    expect(messages(tested)).toContain(`dropped database ${leftover} on Local PostgreSQL left by an interrupted test restore`);
    expect(scratchDatabases(backup.id)).toEqual([]);
    expect(sql('postgres', "SELECT count(*) FROM pg_database WHERE datname = 'hf_test_restore_000000000000_0'")).toBe('1');
    sql('postgres', 'DROP DATABASE hf_test_restore_000000000000_0');
    expect(tested.type).toBe('Restore');
    expect(tested.path).toBe(backup.path);
    expect(messages(tested)).toContain(`check ${sourceDb}: row counts: ok (6234 rows in 2 tables match)`);
    expect(messages(tested)).toContainEqual(expect.stringMatching(/^test restore passed in \d+ ms \(measured restore time\)$/));
    expect(scratchDatabases(tested.id)).toEqual([]);

    const time = await call(server.url, 'GET', '/api/jobs/pg-job/restore-time', { key });
    expect(time.status).toBe(200);
    expect(time.body.data.measuredRestoreMs).toBeGreaterThan(0);
    expect(time.body.data).toMatchObject({ jobId: 'pg-job', measuredExecutionId: tested.id, last: { executionId: tested.id, status: 'Success', file: backup.path } });
    const dashboard = await call(server.url, 'GET', '/api/dashboard/restore-times', { key });
    expect(dashboard.body.data).toContainEqual(expect.objectContaining({ jobId: 'pg-job', jobName: 'shop', measuredRestoreMs: time.body.data.measuredRestoreMs }));
  });

  it('directory: restores into a throwaway folder, compares file count and bytes with the archive, removes the folder', async () => {
    const backup = await run('/api/jobs/dir-job/run');
    expect(backup.status, JSON.stringify(backup.logs)).toBe('Success');
    const sidecar = JSON.parse(await readFile(join(work, 'storage', `${backup.path}.meta.json`), 'utf8'));
    expect(sidecar.figures.files).toEqual({ count: 3, bytes: 70_006 });

    const leftover = `holdfast-test-restore-${tagOf(backup.id)}-left`;
    await mkdir(join(work, 'scratch', leftover));
    await writeFile(join(work, 'scratch', leftover, 'x'), 'x');
    await writeFile(join(work, 'scratch', 'unrelated.txt'), 'kept');
    const tested = await run('/api/jobs/dir-job/test-restore');
    expect(tested.status, JSON.stringify(tested.logs)).toBe('Success');
    expect(messages(tested)).toContain('check file count: ok (3 restored, 3 recorded at backup time)');
    expect(messages(tested)).toContain('check total size: ok (70006 bytes restored, 70006 recorded at backup time)');
    expect(messages(tested)).toContain(`removed folder ${join(work, 'scratch', leftover)} left by an interrupted test restore`);
    // Only scratch folders are ever touched.
    expect(await readdir(join(work, 'scratch'))).toEqual(['unrelated.txt']);
    const time = await call(server.url, 'GET', '/api/jobs/dir-job/restore-time', { key });
    expect(time.body.data.measuredRestoreMs).toBeGreaterThan(0);

    // Figures that do not match what comes back (a file lost between the dump and the archive) fail the checks.
    const sidecarPath = join(work, 'storage', `${backup.path}.meta.json`);
    await writeFile(sidecarPath, JSON.stringify({ ...sidecar, figures: { files: { count: 4, bytes: 70_006 } } }));
    const short = await run('/api/jobs/dir-job/test-restore');
    expect(short.status).toBe('Failed');
    expect(short.error).toBe('test restore failed: test restore checks failed: file count (3 restored, 4 recorded at backup time)');
    expect(await readdir(join(work, 'scratch'))).toEqual(['unrelated.txt']);
  });

  it('a corrupted backup fails the test restore with a clear message, leaves no scratch and notifies like a failed backup', async () => {
    const before = (await call(server.url, 'GET', '/api/jobs/pg-job/restore-time', { key })).body.data;
    const files = (await readdir(join(work, 'storage'))).filter((name) => name.endsWith('.dump.gz.enc'));
    const newest = files.sort().at(-1)!;
    const path = join(work, 'storage', newest);
    const data = await readFile(path);
    data[data.length - 100]! ^= 0xff;
    await writeFile(path, data);

    const tested = await run('/api/jobs/pg-job/test-restore');
    expect(tested.status).toBe('Failed');
    expect(tested.error).toMatch(/^test restore failed: .*(checksum mismatch|failed authentication)/);
    expect(scratchDatabases(tested.id)).toEqual([]);
    expect(messages(tested)).toContainEqual(expect.stringMatching(/^scratch removed: database hf_test_restore_/));
    expect(failures).toContainEqual(expect.objectContaining({ executionId: tested.id, jobId: 'pg-job', jobName: 'shop', status: 'Failed', error: tested.error }));

    // The measured restore time stays the one of the last passing test restore; `last` shows the failure.
    const after = (await call(server.url, 'GET', '/api/jobs/pg-job/restore-time', { key })).body.data;
    expect(after.measuredRestoreMs).toBe(before.measuredRestoreMs);
    expect(after.last).toMatchObject({ executionId: tested.id, status: 'Failed' });
  });

  it('directory: a corrupted backup fails with a clear message and leaves no scratch folder', async () => {
    const backup = await run('/api/jobs/dir-job/run');
    expect(backup.status, JSON.stringify(backup.logs)).toBe('Success');
    const path = join(work, 'storage', backup.path);
    const data = await readFile(path);
    data[Math.floor(data.length / 2)]! ^= 0x40;
    await writeFile(path, data);
    const tested = await run('/api/jobs/dir-job/test-restore');
    expect(tested.status).toBe('Failed');
    // Whatever stage the bad bytes break first (the zstd decoder, the tar reader), the file is named as corrupted.
    expect(tested.error).toMatch(/^test restore failed: (the backup file is corrupted: )?checksum mismatch: the (stored )?file's SHA-256 is [0-9a-f]{64}, the sidecar records [0-9a-f]{64}/);
    expect(messages(tested)).toContainEqual(expect.stringMatching(/^scratch removed: folder /));
    expect(await readdir(join(work, 'scratch'))).toEqual(['unrelated.txt']);
    expect(failures).toContainEqual(expect.objectContaining({ executionId: tested.id, jobId: 'dir-job', status: 'Failed', error: tested.error }));
  });

  it('MariaDB: restores into a throwaway database, checks row counts, drops it', async () => {
    const backup = await run('/api/jobs/maria-job/run');
    expect(backup.status, JSON.stringify(backup.logs)).toBe('Success');
    const sidecar = JSON.parse(await readFile(join(work, 'storage', `${backup.path}.meta.json`), 'utf8'));
    expect(sidecar.figures.databases[mysqlDb]).toEqual({ empty_one: 0, items: 777 });
    const tested = await run('/api/jobs/maria-job/test-restore');
    expect(tested.status, JSON.stringify(tested.logs)).toBe('Success');
    expect(messages(tested)).toContain(`check ${mysqlDb}: row counts: ok (777 rows in 2 tables match)`);
    expect(mariadb(`SHOW DATABASES LIKE 'hf\\_test\\_restore\\_${tagOf(tested.id)}\\_%'`)).toBe('');
  });

  it('a job without a scratch target answers 400; an unknown job 404', async () => {
    const none = await call(server.url, 'POST', '/api/jobs/plain-job/test-restore', { key });
    expect(none.status).toBe(400);
    expect(none.body.error).toMatch(/has no test restore target/);
    expect((await call(server.url, 'POST', '/api/jobs/nope/test-restore', { key })).status).toBe(404);
  });
});
