// The storage browser's routes on a real server (libsql) over a real local storage directory: listings with
// sidecars and their cache, download URLs and the public download (raw, decrypted, failed-then-retried, used),
// lock and delete, and the 400/401/403/404/409/5xx answers.
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { gunzipSync } from 'node:zlib';
import { createCompressStream, createEncryptStream } from '@holdfast/engine';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startBrowserServer, type BrowserServer } from './support/harness.js';

const READ = 'perm:storage:read';
const DOWNLOAD = 'perm:storage:download';
const DELETE = 'perm:storage:delete';

describe('storage browser routes', () => {
  let server: BrowserServer;
  let dir: string;
  const key = randomBytes(32);
  const plaintext = Buffer.concat([Buffer.from('PGDMP'), randomBytes(200_000)]);

  async function writeBackup(name: string, sidecar: Record<string, unknown> | null, body: Buffer | 'encrypted'): Promise<void> {
    if (body === 'encrypted') {
      await pipeline(Readable.from([plaintext]), createCompressStream('GZIP'), createEncryptStream({ key }), createWriteStream(join(dir, name)));
    } else {
      await writeFile(join(dir, name), body);
    }
    if (sidecar) await writeFile(join(dir, `${name}.meta.json`), JSON.stringify(sidecar));
  }

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'hf-browser-'));
    server = await startBrowserServer('sqlite');
    server.catalog.add({ configId: 'disk', name: 'Disk', kind: 'storage', adapterId: 'local', config: { path: dir } });
    server.catalog.add({ configId: 'db', name: 'Orders db', kind: 'source', adapterId: 'postgres', config: {} });
    server.catalog.add({ configId: 'down', name: 'Down', kind: 'storage', adapterId: 'unreachable', config: { code: 'TRANSIENT' } });
    server.catalog.add({ configId: 'denied', name: 'Denied', kind: 'storage', adapterId: 'unreachable', config: { code: 'AUTH' } });
    server.catalog.keys.set('vault-1', key);
  });

  afterEach(async () => {
    await server.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists backups newest first with their sidecar facts; sidecars and index sidecars are not entries', async () => {
    await writeBackup('old.dump.gz.enc', { formatVersion: 1, createdAt: '2026-01-01T00:00:00.000Z', sha256: 'a'.repeat(64), locked: true, compression: { codec: 'GZIP' }, encryption: { profileId: 'vault-1' }, databases: ['shop'], jobId: 'job-1', jobName: 'shop' }, Buffer.from('x'));
    await writeBackup('loose.sql', null, Buffer.from('select 1;'));
    await writeFile(join(dir, 'archive.tar.index.json'), '{}');
    const answer = await server.call('GET', '/api/storage/disk/files', { token: READ });
    expect(answer.status).toBe(200);
    expect(answer.body.map((entry: { path: string }) => entry.path)).toEqual(['loose.sql', 'old.dump.gz.enc']);
    const looseMtime = (await stat(join(dir, 'loose.sql'))).mtime.toISOString();
    expect(answer.body[0]).toEqual({ path: 'loose.sql', size: 9, modifiedAt: looseMtime, createdAt: null, locked: false, jobId: null, jobName: null, sha256: null, encrypted: false, compression: null, databases: [] });
    expect(answer.body[1]).toMatchObject({ path: 'old.dump.gz.enc', size: 1, createdAt: '2026-01-01T00:00:00.000Z', locked: true, jobId: 'job-1', jobName: 'shop', sha256: 'a'.repeat(64), encrypted: true, compression: 'GZIP', databases: ['shop'] });
  });

  it('serves the listing from the cache until refresh=true, a backup event or its own delete invalidates it', async () => {
    await writeBackup('a.sql', null, Buffer.from('a'));
    const first = await server.call('GET', '/api/storage/disk/files', { token: READ });
    expect(first.headers.get('x-holdfast-cache')).toBe('miss');
    await writeBackup('b.sql', null, Buffer.from('b'));
    const cached = await server.call('GET', '/api/storage/disk/files', { token: READ });
    expect(cached.headers.get('x-holdfast-cache')).toBe('hit');
    expect(cached.body.map((entry: { path: string }) => entry.path)).toEqual(['a.sql']);
    const refreshed = await server.call('GET', '/api/storage/disk/files?refresh=true', { token: READ });
    expect(refreshed.body.map((entry: { path: string }) => entry.path).sort()).toEqual(['a.sql', 'b.sql']);
    await writeBackup('c.sql', null, Buffer.from('c'));
    await server.events.emit('backup_success', { executionId: 'e', jobId: 'j' });
    const afterBackup = await server.call('GET', '/api/storage/disk/files', { token: READ });
    expect(afterBackup.headers.get('x-holdfast-cache')).toBe('miss');
    expect(afterBackup.body).toHaveLength(3);
    expect((await server.call('DELETE', '/api/storage/disk/files?file=c.sql', { token: DELETE })).status).toBe(200);
    const afterDelete = await server.call('GET', '/api/storage/disk/files', { token: READ });
    expect(afterDelete.headers.get('x-holdfast-cache')).toBe('miss');
    expect(afterDelete.body.map((entry: { path: string }) => entry.path).sort()).toEqual(['a.sql', 'b.sql']);
  });

  it('answers 404 for an unknown storage, 400 for a source, and 503/502 (never an empty list) when listing fails', async () => {
    expect(await server.call('GET', '/api/storage/nope/files', { token: READ })).toMatchObject({ status: 404, body: { error: 'Storage not found' } });
    const source = await server.call('GET', '/api/storage/db/files', { token: READ });
    expect(source.status).toBe(400);
    expect(source.body.error).toMatch(/is a source, not a storage destination/);
    const down = await server.call('GET', '/api/storage/down/files', { token: READ });
    expect(down.status).toBe(503);
    expect(down.body.error).toMatch(/Storage "Down" could not be read: .*connection refused/);
    const denied = await server.call('GET', '/api/storage/denied/files', { token: READ });
    expect(denied.status).toBe(502);
    expect(denied.body.error).toMatch(/rejected the credentials/);
  });

  it('downloads a file once through a token URL without authentication, with download headers', async () => {
    const name = 'bücher "2026".sql';
    await writeBackup(name, null, Buffer.from('select 42;'));
    const created = await server.call('POST', '/api/storage/disk/download-url', { token: DOWNLOAD, json: { file: name } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ success: true, url: expect.stringMatching(/^\/api\/storage\/public-download\?token=[A-Za-z0-9_-]{43}$/), expiresIn: '5 minutes', singleUse: true });
    const download = await server.call('GET', created.body.url);
    expect(download.status).toBe(200);
    expect(download.bytes.toString()).toBe('select 42;');
    expect(download.headers.get('content-type')).toBe('application/octet-stream');
    expect(download.headers.get('content-length')).toBe('10');
    expect(download.headers.get('content-disposition')).toBe(`attachment; filename="b?cher \\"2026\\".sql"; filename*=UTF-8''b%C3%BCcher%20%222026%22.sql`);
    expect(await server.call('GET', created.body.url)).toMatchObject({ status: 401, body: { error: 'Unauthorized' } });
    expect(server.audits).toContainEqual(expect.objectContaining({ action: 'storage.download-url', resource: 'storage', resourceId: 'disk', details: { file: name, decrypt: true, database: null, path: null } }));
  });

  it('decrypts an encrypted backup (keeping gzip) or hands out the stored bytes with decrypt=false', async () => {
    await writeBackup('shop.dump.gz.enc', { formatVersion: 1, createdAt: '2026-01-01T00:00:00.000Z', sha256: 'b'.repeat(64), compression: { codec: 'GZIP' }, encryption: { profileId: 'vault-1', keyFingerprint: 'f' }, databases: ['shop'] }, 'encrypted');
    const decrypted = await server.call('GET', (await server.call('POST', '/api/storage/disk/download-url', { token: DOWNLOAD, json: { file: 'shop.dump.gz.enc' } })).body.url);
    expect(decrypted.status).toBe(200);
    expect(decrypted.headers.get('content-disposition')).toBe('attachment; filename=shop.dump.gz');
    expect(decrypted.headers.get('content-length')).toBeNull();
    expect(gunzipSync(decrypted.bytes).equals(plaintext)).toBe(true);
    const raw = await server.call('GET', (await server.call('POST', '/api/storage/disk/download-url', { token: DOWNLOAD, json: { file: 'shop.dump.gz.enc', decrypt: false } })).body.url);
    const stored = await readFile(join(dir, 'shop.dump.gz.enc'));
    expect(createHash('sha256').update(raw.bytes).digest('hex')).toBe(createHash('sha256').update(stored).digest('hex'));
    expect(raw.headers.get('content-length')).toBe(String(stored.length));
  });

  it('answers 500 for a download that cannot be decrypted and leaves the token valid for a retry', async () => {
    await writeBackup('shop.dump.gz.enc', { formatVersion: 1, createdAt: '2026-01-01T00:00:00.000Z', sha256: 'b'.repeat(64), compression: { codec: 'GZIP' }, encryption: { profileId: 'vault-1', keyFingerprint: 'f' } }, 'encrypted');
    const good = await readFile(join(dir, 'shop.dump.gz.enc'));
    const { url } = (await server.call('POST', '/api/storage/disk/download-url', { token: DOWNLOAD, json: { file: 'shop.dump.gz.enc' } })).body;
    await writeFile(join(dir, 'shop.dump.gz.enc'), randomBytes(good.length));
    const failed = await server.call('GET', url);
    expect(failed.status).toBe(500);
    expect(failed.body.error).toMatch(/^Download failed: /);
    await writeFile(join(dir, 'shop.dump.gz.enc'), good);
    const retried = await server.call('GET', url);
    expect(retried.status).toBe(200);
    expect(gunzipSync(retried.bytes).equals(plaintext)).toBe(true);
    expect((await server.call('GET', url)).status).toBe(401);
  });

  it('regression (issue 10.5): a single-use link gives exactly one 200, back to back (50) and concurrently (20)', async () => {
    const body = randomBytes(4 * 1024 * 1024);
    await writeBackup('big.dump', null, body);
    const newUrl = async () => (await server.call('POST', '/api/storage/disk/download-url', { token: DOWNLOAD, json: { file: 'big.dump' } })).body.url as string;

    const sequentialUrl = await newUrl();
    const sequential: number[] = [];
    for (let i = 0; i < 50; i++) {
      const answer = await server.call('GET', sequentialUrl);
      sequential.push(answer.status);
      if (answer.status === 200) expect(answer.bytes.equals(body)).toBe(true);
    }
    expect(sequential.filter((status) => status === 200)).toHaveLength(1);
    expect(sequential.filter((status) => status === 401)).toHaveLength(49);

    const concurrentUrl = await newUrl();
    const concurrent = await Promise.all(Array.from({ length: 20 }, () => server.call('GET', concurrentUrl)));
    const ok = concurrent.filter((answer) => answer.status === 200);
    expect(ok).toHaveLength(1);
    expect(ok[0]!.bytes.equals(body)).toBe(true);
    expect(concurrent.filter((answer) => answer.status === 401)).toHaveLength(19);
    expect((await server.call('GET', concurrentUrl)).status).toBe(401);
  });

  it('refuses bad download requests: no token 400, unknown token 401, missing file 404, traversal 400', async () => {
    expect(await server.call('GET', '/api/storage/public-download')).toMatchObject({ status: 400, body: { error: expect.stringMatching(/token/) } });
    expect(await server.call('GET', '/api/storage/public-download?token=forged')).toMatchObject({ status: 401, body: { error: 'Unauthorized' } });
    expect(await server.call('POST', '/api/storage/disk/download-url', { token: DOWNLOAD, json: { file: 'missing.sql' } })).toMatchObject({ status: 404, body: { error: 'File "missing.sql" not found' } });
    const traversal = await server.call('POST', '/api/storage/disk/download-url', { token: DOWNLOAD, json: { file: '../etc/passwd' } });
    expect(traversal.status).toBe(400);
    expect(traversal.body.error).toMatch(/"\.\." segments are not allowed/);
    expect((await server.call('POST', '/api/storage/disk/download-url', { token: DOWNLOAD, json: {} })).status).toBe(400);
    expect((await server.call('POST', '/api/storage/nope/download-url', { token: DOWNLOAD, json: { file: 'a' } })).status).toBe(404);
  });

  it('locks a backup in its sidecar (keeping other fields), refuses to delete it (409), and deletes it with its sidecar once unlocked', async () => {
    await writeBackup('keep.dump', { formatVersion: 1, createdAt: '2026-01-01T00:00:00.000Z', sha256: 'c'.repeat(64), locked: false, futureField: { kept: true } }, Buffer.from('PGDMP'));
    await server.call('GET', '/api/storage/disk/files', { token: READ });
    expect(await server.call('POST', '/api/storage/disk/lock', { token: DELETE, json: { file: 'keep.dump', locked: true } })).toMatchObject({ status: 200, body: { success: true, file: 'keep.dump', locked: true } });
    expect(JSON.parse(await readFile(join(dir, 'keep.dump.meta.json'), 'utf8'))).toMatchObject({ locked: true, futureField: { kept: true }, sha256: 'c'.repeat(64) });
    const listed = await server.call('GET', '/api/storage/disk/files', { token: READ });
    expect(listed.body[0].locked).toBe(true);
    const refused = await server.call('DELETE', '/api/storage/disk/files', { token: DELETE, json: { file: 'keep.dump' } });
    expect(refused).toMatchObject({ status: 409, body: { error: '"keep.dump" is locked; unlock it before deleting' } });
    expect((await stat(join(dir, 'keep.dump'))).size).toBe(5);
    await server.call('POST', '/api/storage/disk/lock', { token: DELETE, json: { file: 'keep.dump', locked: false } });
    expect(await server.call('DELETE', '/api/storage/disk/files', { token: DELETE, json: { file: 'keep.dump' } })).toMatchObject({ status: 200, body: { success: true, file: 'keep.dump' } });
    await expect(stat(join(dir, 'keep.dump'))).rejects.toMatchObject({ code: 'ENOENT' });
    await expect(stat(join(dir, 'keep.dump.meta.json'))).rejects.toMatchObject({ code: 'ENOENT' });
    expect(server.audits.map((entry) => entry.action)).toEqual(['storage.lock', 'storage.unlock', 'storage.delete']);
    expect(server.audits[2]).toMatchObject({ resource: 'storage', resourceId: 'disk', userId: `user-${DELETE}`, details: { file: 'keep.dump' } });
  });

  it('answers 404 for locking or deleting a missing file, 409 for locking one without sidecar, 400 without a file', async () => {
    await writeBackup('bare.sql', null, Buffer.from('x'));
    expect((await server.call('POST', '/api/storage/disk/lock', { token: DELETE, json: { file: 'none.sql', locked: true } })).status).toBe(404);
    expect((await server.call('DELETE', '/api/storage/disk/files?file=none.sql', { token: DELETE })).status).toBe(404);
    expect((await server.call('POST', '/api/storage/disk/lock', { token: DELETE, json: { file: 'bare.sql', locked: true } })).status).toBe(409);
    expect(await server.call('DELETE', '/api/storage/disk/files', { token: DELETE })).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^file: /) } });
    expect((await server.call('DELETE', '/api/storage/disk/files?file=bare.sql.meta.json', { token: DELETE })).status).toBe(400);
  });

  it('requires its permission on each route: 401 without credentials, 403 with another permission', async () => {
    await writeBackup('a.sql', null, Buffer.from('a'));
    const routes: Array<[string, string, string, unknown]> = [
      ['GET', '/api/storage/disk/files', READ, undefined],
      ['POST', '/api/storage/disk/download-url', DOWNLOAD, { file: 'a.sql' }],
      ['POST', '/api/storage/disk/lock', DELETE, { file: 'a.sql', locked: false }],
      ['DELETE', '/api/storage/disk/files?file=a.sql', DELETE, undefined],
    ];
    for (const [method, path, allowed, json] of routes) {
      expect(await server.call(method, path, { json }), `${method} ${path}`).toMatchObject({ status: 401, body: { error: 'Unauthorized' } });
      const other = [READ, DOWNLOAD, DELETE].find((token) => token !== allowed)!;
      expect(await server.call(method, path, { token: `${other},storage:restore`, json }), `${method} ${path}`).toMatchObject({ status: 403, body: { error: 'Forbidden' } });
    }
    // Each still works with exactly its own permission (the lock answers 409: the file has no sidecar).
    expect((await server.call('GET', '/api/storage/disk/files', { token: READ })).status).toBe(200);
    expect((await server.call('POST', '/api/storage/disk/download-url', { token: DOWNLOAD, json: { file: 'a.sql' } })).status).toBe(200);
    expect((await server.call('POST', '/api/storage/disk/lock', { token: DELETE, json: { file: 'a.sql', locked: false } })).status).toBe(409);
    expect((await server.call('DELETE', '/api/storage/disk/files?file=a.sql', { token: DELETE })).status).toBe(200);
  });
});
