import { Readable, Transform } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createAdapterInstance, deterministicStream, readAll, sha256OfStream } from '@holdfast/testkit';
import { isAbortError, silentLogger } from '@holdfast/sdk';
import definition, { type DropboxStorage, dropboxStorageConfig, headerSafeJson } from '../src/index.js';
import { useFakeDropbox } from './support.js';

const MiB = 1024 * 1024;
const dropbox = useFakeDropbox({ pageSize: 3 });

async function storageFor(extra: Record<string, unknown> = {}): Promise<{ storage: DropboxStorage; root: string }> {
  const config = await dropbox.config(extra);
  const storage = createAdapterInstance<DropboxStorage>(definition, config, { logger: silentLogger, credentials: { primary: dropbox.profile() } });
  return { storage, root: config.root as string };
}

function callsSince(start: number): string[] {
  return dropbox.fake.calls.slice(start);
}

describe('storage-dropbox uploads against a local fake of the Dropbox API', () => {
  it('streams a large body as upload_session start + append_v2 + finish in 4 MiB-multiple chunks', async () => {
    const { storage } = await storageFor({ chunkSizeMiB: 4 });
    const size = 10 * MiB + 123;
    const start = dropbox.fake.calls.length;
    const result = await storage.put('big/file.bin', deterministicStream(size, { seed: 'big' }), { size });
    expect(result.size).toBe(size);
    expect(callsSince(start)).toEqual(['files/upload_session/start', 'files/upload_session/append_v2', 'files/upload_session/finish']);
    const got = await sha256OfStream(await storage.get('big/file.bin'));
    expect(got.sha256).toBe((await sha256OfStream(deterministicStream(size, { seed: 'big' }))).sha256);
  });

  it('sends a body that fits one chunk as a single files/upload', async () => {
    const { storage } = await storageFor();
    const start = dropbox.fake.calls.length;
    await storage.put('small.txt', Readable.from([Buffer.from('small')]));
    expect(callsSince(start)).toEqual(['files/upload']);
  });

  it('the fake rejects appended chunks that are not a multiple of 4 MiB (as Dropbox does)', async () => {
    const fake = await dropbox.ready();
    const { storage } = await storageFor();
    await storage.check(); // obtains a token
    const token = [...fake.tokens].find(([, expiry]) => expiry > Date.now())![0];
    const response = await fetch(`${fake.url}/2/files/upload_session/start`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/octet-stream', 'dropbox-api-arg': '{"close":false}' },
      body: new Uint8Array(MiB),
    });
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/multiple of 4194304/);
  });

  it('an aborted upload leaves nothing visible and its session is never committed', async () => {
    const { storage, root } = await storageFor({ chunkSizeMiB: 4 });
    const sessions: string[] = [];
    storage.onUploadSession = (id) => sessions.push(id);
    const controller = new AbortController();
    let sent = 0;
    // Counted where the adapter pulls, so the abort lands after 9 MiB went into the upload.
    const body = deterministicStream(32 * MiB, { seed: 'abort' }).pipe(
      new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          sent += chunk.length;
          if (sent > 9 * MiB) controller.abort();
          callback(null, chunk);
        },
      }),
    );
    const error = await storage.put('aborted/file.bin', body, { signal: controller.signal }).then(() => undefined, (e: unknown) => e);
    expect(isAbortError(error)).toBe(true);
    expect(sessions).toHaveLength(1);
    const session = dropbox.fake.store.sessions.get(sessions[0]!);
    expect(session?.isFinished).toBe(false);
    expect(session?.offset).toBeGreaterThanOrEqual(4 * MiB);
    expect([...dropbox.fake.store.files.keys()].filter((path) => path.startsWith(root.toLowerCase()))).toEqual([]);
    await expect(storage.stat('aborted/file.bin')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('renews a token that expires in the middle of an upload session and finishes the upload', async () => {
    const { storage } = await storageFor({ chunkSizeMiB: 4 });
    const size = 12 * MiB;
    let sent = 0;
    let isExpired = false;
    const grants = dropbox.fake.tokenGrants;
    const body = deterministicStream(size, { seed: 'expiring' }).pipe(
      new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          sent += chunk.length;
          if (!isExpired && sent > 2 * 4 * MiB) {
            // Every issued token expires now: the next chunk request is answered 401.
            for (const token of dropbox.fake.tokens.keys()) dropbox.fake.tokens.set(token, Date.now() - 1);
            isExpired = true;
          }
          callback(null, chunk);
        },
      }),
    );
    const rejected = dropbox.fake.rejectedCalls;
    expect((await storage.put('expired/file.bin', body, { size })).size).toBe(size);
    expect(isExpired).toBe(true);
    expect(dropbox.fake.rejectedCalls - rejected).toBe(1);
    expect(dropbox.fake.tokenGrants - grants).toBe(2);
    expect((await sha256OfStream(await storage.get('expired/file.bin'))).sha256).toBe((await sha256OfStream(deterministicStream(size, { seed: 'expiring' }))).sha256);
  });

  it('check() is ok and writes nothing: no file, no folder, the probe session uncommitted', async () => {
    const { storage } = await storageFor();
    const [files, folders] = [dropbox.fake.store.files.size, dropbox.fake.store.folders.size];
    const health = await storage.check();
    expect(health).toMatchObject({ ok: true });
    expect(dropbox.fake.store.files.size).toBe(files);
    expect(dropbox.fake.store.folders.size).toBe(folders);
    expect(dropbox.fake.calls.at(-1)).toBe('files/upload_session/start');
  });

  it('lists through files/list_folder/continue pages and filters partial-name prefixes', async () => {
    const { storage } = await storageFor();
    for (const key of ['p/1', 'p/2', 'p/3', 'p/sub/4', 'pq/5', 'p2/6']) await storage.put(key, Readable.from([Buffer.from(key)]));
    const start = dropbox.fake.calls.length;
    const keys: string[] = [];
    for await (const entry of storage.list('p')) keys.push(entry.key);
    expect(keys.sort()).toEqual(['p/1', 'p/2', 'p/3', 'p/sub/4', 'p2/6', 'pq/5']);
    expect(callsSince(start).filter((call) => call === 'files/list_folder/continue').length).toBeGreaterThanOrEqual(2);
    const underP: string[] = [];
    for await (const entry of storage.list('p/')) underP.push(entry.key);
    expect(underP.sort()).toEqual(['p/1', 'p/2', 'p/3', 'p/sub/4']);
  });

  it('range reads send HTTP Range to files/download', async () => {
    const { storage } = await storageFor();
    await storage.put('r.txt', Readable.from([Buffer.from('0123456789')]));
    expect((await readAll(await storage.get('r.txt', { range: { start: 3, end: 5 } }))).toString()).toBe('345');
    expect((await readAll(await storage.get('r.txt', { range: { start: 8 } }))).toString()).toBe('89');
    await expect(storage.get('r.txt', { range: { start: 50 } })).rejects.toMatchObject({ code: 'CONFIG' });
  });
});

describe('storage-dropbox config', () => {
  it('accepts chunk sizes in multiples of 4 MiB up to 148 and folder roots', () => {
    expect(dropboxStorageConfig.parse({})).toMatchObject({ root: '/Holdfast', chunkSizeMiB: 8 });
    expect(dropboxStorageConfig.safeParse({ chunkSizeMiB: 6 }).success).toBe(false);
    expect(dropboxStorageConfig.safeParse({ chunkSizeMiB: 152 }).success).toBe(false);
    expect(dropboxStorageConfig.safeParse({ chunkSizeMiB: 148 }).success).toBe(true);
    for (const root of ['Holdfast', '/Holdfast/', '/a/../b', '/a//b']) expect(dropboxStorageConfig.safeParse({ root }).success, root).toBe(false);
    expect(dropboxStorageConfig.safeParse({ root: '' }).success).toBe(true);
  });

  it('escapes non-ASCII in Dropbox-API-Arg as \\uXXXX (HTTP header safe JSON)', () => {
    const arg = headerSafeJson({ path: '/naïve 東京.bin' });
    expect(arg).toBe('{"path":"/na\\u00efve \\u6771\\u4eac.bin"}');
    expect(JSON.parse(arg)).toEqual({ path: '/naïve 東京.bin' });
  });
});
