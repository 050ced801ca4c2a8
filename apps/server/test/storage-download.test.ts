// End to end through the assembled server (libsql): an encrypted GZIP backup made by the real engine from a real
// PostgreSQL database to a local directory, listed, then downloaded WITHOUT authentication through a single-use URL
// created with an API key holding only storage:download (and storage:read for the listing).
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';
import { databaseName, dropDatabase, seedDatabase } from './support/postgres-data.js';

async function settled(server: FullServer, caller: Caller, executionId: string): Promise<any> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answer = await server.call('GET', `/api/executions/${executionId}?includeLogs=true`, caller);
    if (!['Pending', 'Running'].includes(answer.body.data.status)) return answer.body.data;
    if (Date.now() > deadline) throw new Error(`execution ${executionId} still ${answer.body.data.status}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** A public download: plain fetch, no credentials at all. */
async function fetchPublic(server: FullServer, url: string): Promise<{ status: number; bytes: Buffer; headers: Headers }> {
  const response = await fetch(`${server.url}${url}`);
  return { status: response.status, bytes: Buffer.from(await response.arrayBuffer()), headers: response.headers };
}

describe('storage listing and public download through the assembled server', () => {
  const databases: string[] = [];
  let server: FullServer | undefined;
  let localDir: string | undefined;

  afterAll(async () => {
    await server?.close();
    await Promise.all(databases.map(dropDatabase));
    if (localDir) await rm(localDir, { recursive: true, force: true });
  });

  it('lists an encrypted backup and downloads it raw and decrypted once per URL; a multi-database dump needs a database', async () => {
    server = await startFullServer('sqlite');
    const admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    const shop = databaseName('dl_shop');
    const crm = databaseName('dl_crm');
    databases.push(shop, crm);
    await seedDatabase(shop, 2_000);
    await seedDatabase(crm, 500);
    localDir = await mkdtemp(join(tmpdir(), 'holdfast-e2e-download-'));

    const create = async (path: string, body: unknown) => {
      const answer = await server!.call('POST', path, admin, body);
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(201);
      return answer.body;
    };
    const pg = await create('/api/adapters', { name: 'pg', type: 'database', adapterId: 'postgres', config: { user: 'root', host: '127.0.0.1' } });
    const local = await create('/api/adapters', { name: 'local disk', type: 'storage', adapterId: 'local', config: { path: localDir } });
    const vault = await create('/api/vault', { name: 'download key' });
    const job = (name: string, dbs: string[]) =>
      create('/api/jobs', { name, schedule: '0 3 * * *', sourceId: pg.id, databases: dbs, compression: 'GZIP', encryptionProfileId: vault.id, destinations: [{ configId: local.id, priority: 0 }] });
    const single = await job('single', [shop]);
    const multi = await job('multi', [shop, crm]);

    const issued = await create('/api/api-keys', { name: 'downloader', permissions: ['jobs:execute', 'history:read', 'storage:read', 'storage:download'] });
    const key: Caller = { bearer: issued.key ?? issued.rawKey };
    const runJob = async (id: string) => {
      const trigger = await server!.call('POST', `/api/jobs/${id}/run`, key, {});
      expect(trigger.status, JSON.stringify(trigger.body)).toBe(200);
      const done = await settled(server!, key, trigger.body.executionId);
      expect(done.status, JSON.stringify(done.logs?.slice(-5))).toBe('Success');
      return done.path as string;
    };
    const singlePath = await runJob(single.id);
    const multiPath = await runJob(multi.id);
    expect(singlePath).toMatch(/\.dump\.gz\.enc$/);
    expect(multiPath).toMatch(/\.pgdumps\.gz\.enc$/);

    // The listing names both backups with their sidecar facts; the sidecars are not entries.
    const listing = await server.call('GET', `/api/storage/${local.id}/files`, key);
    expect(listing.status).toBe(200);
    expect(listing.body.map((entry: { path: string }) => entry.path).sort()).toEqual([multiPath, singlePath].sort());
    const sidecar = JSON.parse(await readFile(join(localDir, `${singlePath}.meta.json`), 'utf8'));
    expect(listing.body.find((entry: { path: string }) => entry.path === singlePath)).toMatchObject({
      sha256: sidecar.sha256,
      encrypted: true,
      compression: 'GZIP',
      databases: [shop],
      jobId: single.id,
      jobName: 'single',
      locked: false,
      createdAt: sidecar.createdAt,
    });

    // decrypt=false: the stored bytes, whose SHA-256 is the one the sidecar records.
    const rawUrl = await server.call('POST', `/api/storage/${local.id}/download-url`, key, { file: singlePath, decrypt: false });
    expect(rawUrl.status, JSON.stringify(rawUrl.body)).toBe(200);
    expect(rawUrl.body).toMatchObject({ success: true, expiresIn: '5 minutes', singleUse: true });
    const raw = await fetchPublic(server, rawUrl.body.url);
    expect(raw.status).toBe(200);
    expect(createHash('sha256').update(raw.bytes).digest('hex')).toBe(sidecar.sha256);
    expect(raw.headers.get('content-length')).toBe(String(sidecar.size));

    // decrypt=true (the default): gzip kept, and it gunzips to a pg_dump custom-format archive.
    const plainUrl = await server.call('POST', `/api/storage/${local.id}/download-url`, key, { file: singlePath });
    const plain = await fetchPublic(server, plainUrl.body.url);
    expect(plain.status).toBe(200);
    expect(plain.headers.get('content-disposition')).toContain(singlePath.replace(/\.enc$/, ''));
    expect(gunzipSync(plain.bytes).subarray(0, 5).toString('ascii')).toBe('PGDMP');

    // Single use: the same URL again is refused.
    expect((await fetchPublic(server, plainUrl.body.url)).status).toBe(401);

    // A decrypted download of a multi-database dump must name the database; the answer names those it holds.
    const ambiguous = await server.call('POST', `/api/storage/${local.id}/download-url`, key, { file: multiPath });
    expect(ambiguous.status).toBe(400);
    expect(ambiguous.body.error).toContain(shop);
    expect(ambiguous.body.error).toContain(crm);
    const oneUrl = await server.call('POST', `/api/storage/${local.id}/download-url`, key, { file: multiPath, database: crm });
    expect(oneUrl.status, JSON.stringify(oneUrl.body)).toBe(200);
    const one = await fetchPublic(server, oneUrl.body.url);
    expect(one.status).toBe(200);
    expect(one.bytes.subarray(0, 5).toString('ascii')).toBe('PGDMP');
    expect(one.headers.get('content-disposition')).toContain(`-${crm}.dump`);

    // The key cannot delete: storage:delete was not granted.
    expect((await server.call('DELETE', `/api/storage/${local.id}/files?file=${encodeURIComponent(singlePath)}`, key)).status).toBe(403);
  });
});
