import { Readable, Transform } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createAdapterInstance, deterministicStream, readAll, sha256OfStream } from '@holdfast/testkit';
import { isAbortError, silentLogger } from '@holdfast/sdk';
import definition, { type GdriveStorage, driveQueryLiteral, gdriveStorageConfig } from '../src/index.js';
import { useFakeDrive } from './support.js';

const MiB = 1024 * 1024;
const drive = useFakeDrive({ pageSize: 3 });

async function storageFor(extra: Record<string, unknown> = {}): Promise<GdriveStorage> {
  return createAdapterInstance<GdriveStorage>(definition, await drive.config(extra), { logger: silentLogger, credentials: { primary: drive.profile() } });
}

const sessionPuts = (since: number) => drive.fake.calls.slice(since).filter((call) => call.endsWith('(session)'));

describe('storage-gdrive uploads against a local fake of the Google Drive API', () => {
  it('streams a large body through a resumable session in 256 KiB-multiple chunks (308 until the last)', async () => {
    const storage = await storageFor({ chunkSizeMiB: 1 });
    const size = 3 * MiB + 1000;
    const start = drive.fake.calls.length;
    expect((await storage.put('big/file.bin', deterministicStream(size, { seed: 'big' }), { size })).size).toBe(size);
    expect(drive.fake.calls.slice(start)).toContain('POST /upload/drive/v3/files');
    expect(sessionPuts(start)).toEqual(Array(4).fill('PUT /upload/drive/v3/files (session)'));
    const got = await sha256OfStream(await storage.get('big/file.bin'));
    expect(got.sha256).toBe((await sha256OfStream(deterministicStream(size, { seed: 'big' }))).sha256);
  });

  it('overwrites through PATCH of the existing file (one file, same id, new content)', async () => {
    const storage = await storageFor();
    await storage.put('same.txt', Readable.from([Buffer.from('first version')]));
    const before = [...drive.fake.store.files.values()].filter((file) => file.name === 'same.txt');
    const start = drive.fake.calls.length;
    await storage.put('same.txt', Readable.from([Buffer.from('second')]));
    expect(drive.fake.calls.slice(start).some((call) => call.startsWith('PATCH /upload/drive/v3/files/'))).toBe(true);
    const after = [...drive.fake.store.files.values()].filter((file) => file.name === 'same.txt' && file.parents.includes(before[0]!.parents[0]!));
    expect(after.map((file) => file.id)).toEqual([before[0]!.id]);
    expect((await readAll(await storage.get('same.txt'))).toString()).toBe('second');
  });

  it('the fake rejects a non-final chunk that is not a multiple of 256 KiB (as Drive does)', async () => {
    const fake = await drive.ready();
    const storage = await storageFor();
    await storage.put('probe.txt', Readable.from([Buffer.from('x')]));
    const token = [...fake.tokens].find(([, expiry]) => expiry > Date.now())![0];
    const started = await fetch(`${fake.url}/upload/drive/v3/files?uploadType=resumable`, {
      method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'odd.bin' }),
    });
    const session = started.headers.get('location')!;
    const odd = await fetch(session, { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-range': `bytes 0-99999/*` }, body: new Uint8Array(100_000) });
    expect(odd.status).toBe(400);
    expect(await odd.text()).toMatch(/multiple of 262144/);
  });

  it('an aborted upload leaves nothing visible and its session is cancelled', async () => {
    const storage = await storageFor({ chunkSizeMiB: 1 });
    const sessions: string[] = [];
    storage.onUploadSession = (uri) => sessions.push(uri);
    const controller = new AbortController();
    let sent = 0;
    // Counted where the adapter pulls, so the abort lands after 3 MiB went into the upload.
    const body = deterministicStream(16 * MiB, { seed: 'abort' }).pipe(
      new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          sent += chunk.length;
          if (sent > 3 * MiB) controller.abort();
          callback(null, chunk);
        },
      }),
    );
    const error = await storage.put('aborted/file.bin', body, { signal: controller.signal }).then(() => undefined, (e: unknown) => e);
    expect(isAbortError(error)).toBe(true);
    expect(sessions).toHaveLength(1);
    const session = drive.fake.sessions.get(new URL(sessions[0]!).searchParams.get('upload_id')!);
    expect(session?.state).toBe('cancelled');
    expect(session?.received).toBeGreaterThanOrEqual(MiB);
    expect([...drive.fake.store.files.values()].filter((file) => file.name === 'aborted/file.bin')).toEqual([]);
    await expect(storage.stat('aborted/file.bin')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('renews a token that expires in the middle of an upload session and finishes the upload', async () => {
    const storage = await storageFor({ chunkSizeMiB: 1 });
    const size = 12 * MiB;
    let sent = 0;
    let isExpired = false;
    const grants = drive.fake.tokenGrants;
    const body = deterministicStream(size, { seed: 'expiring' }).pipe(
      new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          sent += chunk.length;
          if (!isExpired && sent > 2 * MiB) {
            // Every issued token expires now: the next chunk request is answered 401.
            for (const token of drive.fake.tokens.keys()) drive.fake.tokens.set(token, Date.now() - 1);
            isExpired = true;
          }
          callback(null, chunk);
        },
      }),
    );
    const rejected = drive.fake.rejectedCalls;
    expect((await storage.put('expired/file.bin', body, { size })).size).toBe(size);
    expect(isExpired).toBe(true);
    expect(drive.fake.rejectedCalls - rejected).toBe(1);
    expect(drive.fake.tokenGrants - grants).toBe(2);
    expect((await sha256OfStream(await storage.get('expired/file.bin'))).sha256).toBe((await sha256OfStream(deterministicStream(size, { seed: 'expiring' }))).sha256);
  });

  it('check() is ok and creates nothing, even when the folder does not exist yet', async () => {
    const storage = await storageFor();
    const count = drive.fake.store.files.size;
    const health = await storage.check();
    expect(health.ok).toBe(true);
    expect(health.message).toContain('not created yet');
    expect(drive.fake.store.files.size).toBe(count);
  });

  it('lists through nextPageToken pages, and by partial-name prefix', async () => {
    const storage = await storageFor();
    for (const key of ['p/1', 'p/2', 'p/3', 'p/sub/4', 'pq/5', 'x/6']) await storage.put(key, Readable.from([Buffer.from(key)]));
    const keys: string[] = [];
    for await (const entry of storage.list('p')) keys.push(entry.key);
    expect(keys.sort()).toEqual(['p/1', 'p/2', 'p/3', 'p/sub/4', 'pq/5']);
    const under: string[] = [];
    for await (const entry of storage.list('p/')) under.push(entry.key);
    expect(under.sort()).toEqual(['p/1', 'p/2', 'p/3', 'p/sub/4']);
  });

  it('range reads send HTTP Range to files.get?alt=media', async () => {
    const storage = await storageFor();
    await storage.put('r.txt', Readable.from([Buffer.from('0123456789')]));
    expect((await readAll(await storage.get('r.txt', { range: { start: 3, end: 5 } }))).toString()).toBe('345');
    expect((await readAll(await storage.get('r.txt', { range: { start: 8 } }))).toString()).toBe('89');
    await expect(storage.get('r.txt', { range: { start: 50 } })).rejects.toMatchObject({ code: 'CONFIG' });
  });

  it('stores an empty object (final request "bytes */0")', async () => {
    const storage = await storageFor();
    expect((await storage.put('empty.bin', Readable.from([]))).size).toBe(0);
    expect((await storage.stat('empty.bin')).size).toBe(0);
  });
});

describe('storage-gdrive config and queries', () => {
  it('validates folder paths and ids', () => {
    expect(gdriveStorageConfig.parse({})).toMatchObject({ parentFolderId: 'root', folderPath: 'Holdfast', chunkSizeMiB: 8 });
    for (const folderPath of ['/Holdfast', 'a//b', 'a/../b', "it's"]) expect(gdriveStorageConfig.safeParse({ folderPath }).success, folderPath).toBe(false);
    expect(gdriveStorageConfig.safeParse({ parentFolderId: "x' or 'y" }).success).toBe(false);
  });

  it('escapes quotes and backslashes in query literals', () => {
    expect(driveQueryLiteral("it's a\\b")).toBe("'it\\'s a\\\\b'");
  });
});
