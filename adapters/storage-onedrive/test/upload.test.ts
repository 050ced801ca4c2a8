import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { Readable, Transform } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createAdapterInstance, deterministicStream, readAll, sha256OfStream, startRssSampler } from '@holdfast/testkit';
import { isAbortError, silentLogger } from '@holdfast/sdk';
import definition, { type OnedriveStorage, itemPath, onedriveStorageConfig } from '../src/index.js';
import { storedProfile, useFakeGraph } from './support.js';

const MiB = 1024 * 1024;
const graph = useFakeGraph({ pageSize: 2 });

async function storageFor(extra: Record<string, unknown> = {}): Promise<OnedriveStorage> {
  return createAdapterInstance<OnedriveStorage>(definition, await graph.config(extra), { logger: silentLogger, ...storedProfile(graph.profile()).context });
}

const spools = () => readdirSync(tmpdir()).filter((name) => name.startsWith('holdfast-onedrive-'));
const digest = async (size: number, seed: string) => (await sha256OfStream(deterministicStream(size, { seed }))).sha256;

describe('storage-onedrive uploads against a local fake of the Microsoft Graph drive API', () => {
  it('streams a body of known size through an upload session in 320 KiB-multiple fragments, then shows the file', async () => {
    const storage = await storageFor({ fragmentSizeKiB: 640 });
    const size = 2 * MiB + 77;
    const start = graph.fake.calls.length;
    expect((await storage.put('big/file.bin', deterministicStream(size, { seed: 'big' }), { size })).size).toBe(size);
    const calls = graph.fake.calls.slice(start);
    expect(calls.filter((call) => call.endsWith('/createUploadSession'))).toHaveLength(1);
    expect(calls.filter((call) => call === 'PUT uploadUrl')).toHaveLength(4);
    expect((await sha256OfStream(await storage.get('big/file.bin'))).sha256).toBe(await digest(size, 'big'));
  });

  it('spools a body of unknown size to a private temp file (OneDrive needs the total), uploads it and removes the spool', async () => {
    const storage = await storageFor({ fragmentSizeKiB: 640 });
    const before = spools();
    const size = 3 * MiB + 5;
    expect((await storage.put('unknown/size.bin', deterministicStream(size, { seed: 'unknown' }))).size).toBe(size);
    expect((await sha256OfStream(await storage.get('unknown/size.bin'))).sha256).toBe(await digest(size, 'unknown'));
    expect(spools()).toEqual(before);
  });

  it('spooling a 64 MiB body of unknown size keeps memory flat (the engine\'s puts carry no size)', { timeout: 120_000 }, async () => {
    const storage = await storageFor();
    const size = 64 * MiB;
    await storage.put('warm-up.bin', deterministicStream(4 * MiB, { seed: 'w' }));
    const sampler = startRssSampler();
    expect((await storage.put('large/unknown.bin', deterministicStream(size, { seed: 'large' }))).size).toBe(size);
    const report = sampler.stop();
    expect(report.growth).toBeLessThan(64 * MiB);
    expect((await sha256OfStream(await storage.get('large/unknown.bin'))).sha256).toBe(await digest(size, 'large'));
  });

  it('sends a small body as one simple upload (PUT …/content)', async () => {
    const storage = await storageFor();
    const start = graph.fake.calls.length;
    await storage.put('small.txt', Readable.from([Buffer.from('small')]));
    expect(graph.fake.calls.slice(start).filter((call) => !call.startsWith('GET'))).toHaveLength(1);
    expect(graph.fake.calls.slice(start).find((call) => call.startsWith('PUT'))).toMatch(/^PUT root:\/.*small\.txt:\/content$/);
  });

  it('the fake refuses what OneDrive refuses: "*" totals, odd fragment sizes, a bearer token on the upload URL', async () => {
    const fake = await graph.ready();
    const storage = await storageFor();
    await storage.check();
    const token = [...fake.tokens].find(([, expiry]) => expiry > Date.now())![0];
    const session = async () => {
      const response = await fetch(`${fake.url}/v1.0/me/drive/root:/odd.bin:/createUploadSession`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: '{}' });
      return ((await response.json()) as { uploadUrl: string }).uploadUrl;
    };
    const star = await fetch(await session(), { method: 'PUT', headers: { 'content-range': 'bytes 0-99/*' }, body: new Uint8Array(100) });
    expect(star.status).toBe(400);
    const odd = await fetch(await session(), { method: 'PUT', headers: { 'content-range': 'bytes 0-99999/500000' }, body: new Uint8Array(100_000) });
    expect([odd.status, ((await odd.json()) as { error: { message: string } }).error.message]).toEqual([400, expect.stringMatching(/multiple of 327680/)]);
    const bearer = await fetch(await session(), { method: 'PUT', headers: { authorization: `Bearer ${token}`, 'content-range': 'bytes 0-99/100' }, body: new Uint8Array(100) });
    expect(bearer.status).toBe(401);
  });

  it('an aborted upload leaves nothing visible and its session is cancelled (DELETE uploadUrl)', async () => {
    const storage = await storageFor({ fragmentSizeKiB: 640 });
    const sessions: string[] = [];
    storage.onUploadSession = (url) => sessions.push(url);
    const controller = new AbortController();
    let sent = 0;
    const size = 16 * MiB;
    // Counted where the adapter pulls, so the abort lands after 2 MiB went into the upload.
    const body = deterministicStream(size, { seed: 'abort' }).pipe(
      new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          sent += chunk.length;
          if (sent > 2 * MiB) controller.abort();
          callback(null, chunk);
        },
      }),
    );
    const error = await storage.put('aborted/file.bin', body, { signal: controller.signal, size }).then(() => undefined, (e: unknown) => e);
    expect(isAbortError(error)).toBe(true);
    expect(sessions).toHaveLength(1);
    const session = graph.fake.sessions.get(sessions[0]!.split('/').pop()!);
    expect(session?.state).toBe('cancelled');
    expect(session?.received).toBeGreaterThanOrEqual(640 * 1024);
    expect([...graph.fake.store.items.values()].filter((item) => item.name === 'file.bin' && item.path.includes('aborted'))).toEqual([]);
    await expect(storage.stat('aborted/file.bin')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('a body shorter than its declared size fails and leaves nothing', async () => {
    const storage = await storageFor({ fragmentSizeKiB: 320 });
    const error = await storage.put('short.bin', deterministicStream(MiB, { seed: 's' }), { size: 2 * MiB }).then(() => undefined, (e: unknown) => e);
    expect(error).toMatchObject({ code: 'CONFIG' });
    await expect(storage.stat('short.bin')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('check() is ok and creates nothing, even when the folder does not exist yet', async () => {
    const storage = await storageFor();
    const count = graph.fake.store.items.size;
    const health = await storage.check();
    expect(health.ok).toBe(true);
    expect(health.message).toContain('not created yet');
    expect(graph.fake.store.items.size).toBe(count);
  });

  it('lists nested folders through @odata.nextLink pages, and by partial-name prefix', async () => {
    const storage = await storageFor();
    for (const key of ['p/1', 'p/2', 'p/3', 'p/sub/4', 'pq/5', 'x/6']) await storage.put(key, Readable.from([Buffer.from(key)]));
    const keys: string[] = [];
    for await (const entry of storage.list('p')) keys.push(entry.key);
    expect(keys.sort()).toEqual(['p/1', 'p/2', 'p/3', 'p/sub/4', 'pq/5']);
    const under: string[] = [];
    for await (const entry of storage.list('p/')) under.push(entry.key);
    expect(under.sort()).toEqual(['p/1', 'p/2', 'p/3', 'p/sub/4']);
  });

  it('range reads follow the 302 to the download URL with the Range header', async () => {
    const storage = await storageFor();
    await storage.put('r.txt', Readable.from([Buffer.from('0123456789')]));
    expect((await readAll(await storage.get('r.txt', { range: { start: 3, end: 5 } }))).toString()).toBe('345');
    expect((await readAll(await storage.get('r.txt', { range: { start: 8 } }))).toString()).toBe('89');
    await expect(storage.get('r.txt', { range: { start: 50 } })).rejects.toMatchObject({ code: 'CONFIG' });
  });
});

describe('storage-onedrive config and paths', () => {
  it('accepts fragments in multiples of 320 KiB up to 60 MiB', () => {
    expect(onedriveStorageConfig.parse({})).toMatchObject({ folderPath: 'Holdfast', fragmentSizeKiB: 10_240, tenant: 'common' });
    expect(onedriveStorageConfig.safeParse({ fragmentSizeKiB: 1000 }).success).toBe(false);
    expect(onedriveStorageConfig.safeParse({ fragmentSizeKiB: 61_760 }).success).toBe(false);
    expect(onedriveStorageConfig.safeParse({ fragmentSizeKiB: 61_440 }).success).toBe(true);
    for (const folderPath of ['/a', 'a/', 'a/../b', 'a:b']) expect(onedriveStorageConfig.safeParse({ folderPath }).success, folderPath).toBe(false);
  });

  it('addresses items by URL-encoded path', () => {
    expect(itemPath([])).toBe('root');
    expect(itemPath(['Holdfast', 'dir with space', 'naïve#1.bin'])).toBe('root:/Holdfast/dir%20with%20space/na%C3%AFve%231.bin:');
  });
});
