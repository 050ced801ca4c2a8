// Issue 20, acceptance 5: a PostgreSQL job with two databases writes one encrypted seekable archive. A decrypted
// download naming a database streams exactly that database's dump, named after the backup and the database; without
// a name the request fails with 400 naming the databases. One database is restored alone through the API.
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { creator, settledExecution } from './support/api-steps.js';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';
import { databaseName, dropDatabase, seedDatabase, tableDigests } from './support/postgres-data.js';

const run = promisify(execFile);

describe('seekable archives of several PostgreSQL databases (issue 20)', () => {
  const databases: string[] = [];
  let server: FullServer;
  let admin: Caller;
  let work: string;
  let storageId: string;
  let backup: string;
  let shop: string;
  let crm: string;

  const settled = (executionId: string): Promise<any> => settledExecution(server, admin, executionId);

  beforeAll(async () => {
    shop = databaseName('hfa_shop');
    crm = databaseName('hfa_crm');
    databases.push(shop, crm);
    await seedDatabase(shop, 3_000);
    await seedDatabase(crm, 700);
    work = await mkdtemp(join(tmpdir(), 'holdfast-seekable-db-'));
    server = await startFullServer('sqlite');
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    const create = creator(server, () => admin);
    const pg = await create('/api/adapters', { name: 'pg', type: 'database', adapterId: 'postgres', config: { user: 'root', host: '127.0.0.1' } });
    const local = await create('/api/adapters', { name: 'disk', type: 'storage', adapterId: 'local', config: { path: work } });
    storageId = local.id;
    const vault = await create('/api/vault', { name: 'db archive key' });
    const job = await create('/api/jobs', {
      name: 'two-dbs',
      schedule: '0 3 * * *',
      sourceId: pg.id,
      databases: [shop, crm],
      compression: 'ZSTD',
      archiveFormat: 'SEEKABLE',
      encryptionProfileId: vault.id,
      destinations: [{ configId: local.id, priority: 0 }],
    });
    const trigger = await server.call('POST', `/api/jobs/${job.id}/run`, admin, {});
    const done = await settled(trigger.body.executionId);
    expect(done.status, JSON.stringify(done.logs?.slice(-5))).toBe('Success');
    backup = done.path;
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    await Promise.all(databases.map(dropDatabase));
    await rm(work, { recursive: true, force: true });
  });

  it('stores one encrypted archive whose index lists a dump per database', async () => {
    expect(backup).toMatch(/^two-dbs.*\.hfa\.enc$/);
    const listing = await server.call('GET', `/api/storage/${storageId}/archive?file=${encodeURIComponent(backup)}`, admin);
    expect(listing.status, JSON.stringify(listing.body)).toBe(200);
    const dumps = listing.body.entries.filter((entry: any) => entry.kind === 'database-dump').map((entry: any) => entry.database);
    expect(dumps).toEqual([shop, crm]);
  });

  it('refuses a decrypted download without a database, naming the databases', async () => {
    const answer = await server.call('POST', `/api/storage/${storageId}/download-url`, admin, { file: backup });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toContain(shop);
    expect(answer.body.error).toContain(crm);
    const unknown = await server.call('POST', `/api/storage/${storageId}/download-url`, admin, { file: backup, database: 'nope' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toContain(crm);
  });

  it('streams the named database as a pg_restore-able dump named after the backup and the database', async () => {
    const url = await server.call('POST', `/api/storage/${storageId}/download-url`, admin, { file: backup, database: crm });
    expect(url.status, JSON.stringify(url.body)).toBe(200);
    const response = await fetch(`${server.url}${url.body.url}`);
    expect(response.status).toBe(200);
    const bytes = Buffer.from(await response.arrayBuffer());
    expect(bytes.subarray(0, 5).toString('ascii')).toBe('PGDMP');
    const stem = backup.replace(/\.hfa\.enc$/, '');
    expect(response.headers.get('content-disposition')).toContain(`${stem}-${crm}.dump`);
    const file = join(work, 'crm.dump');
    await writeFile(file, bytes);
    const copy = databaseName('hfa_crm_copy');
    databases.push(copy);
    await run('createdb', ['-h', '127.0.0.1', '-U', 'root', copy]);
    await run('pg_restore', ['-h', '127.0.0.1', '-U', 'root', '--no-owner', '-d', copy, file]);
    expect(await tableDigests(copy)).toEqual(await tableDigests(crm));
  });

  it('restores one database alone through the API, leaving the other untouched', async () => {
    const target = databaseName('hfa_shop_restored');
    databases.push(target);
    const answer = await server.call('POST', `/api/storage/${storageId}/restore`, admin, { file: backup, paths: [shop], databaseMapping: { [shop]: target } });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const restore = await settled(answer.body.executionId);
    expect(restore.status, JSON.stringify(restore.logs?.slice(-4))).toBe('Success');
    expect(await tableDigests(target)).toEqual(await tableDigests(shop));
  });
});
