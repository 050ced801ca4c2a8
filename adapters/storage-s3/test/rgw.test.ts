import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:net';
import { Readable, Transform } from 'node:stream';
import { HeadObjectCommand, ListMultipartUploadsCommand, CreateMultipartUploadCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAdapterError, silentLogger, type AdapterContext, type KernelLogger } from '@holdfast/sdk';
import { s3StorageConfig } from '../src/config.js';
import { S3Storage } from '../src/s3-storage.js';
import { adminClient, freshBucket, removeBucket, rgw, rgwConfig, type RgwState } from './server.js';

const MiB = 1024 * 1024;

/** A logger that keeps what the adapter logs, so a test can see how an upload was cut. */
function recordingLogger(): KernelLogger & { entries: Array<{ obj: unknown; msg?: string }> } {
  const entries: Array<{ obj: unknown; msg?: string }> = [];
  const keep = (obj: unknown, msg?: string) => entries.push({ obj, msg });
  return { entries, debug: keep, info: keep, warn: keep, error: keep };
}

/** `total` random bytes in 1 MiB chunks, and their SHA-256 and full content for slicing. */
function randomBody(total: number): { chunks: Buffer[]; sha256: string; content: Buffer } {
  const content = randomBytes(total);
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < total; offset += MiB) chunks.push(content.subarray(offset, Math.min(total, offset + MiB)));
  return { chunks, sha256: createHash('sha256').update(content).digest('hex'), content };
}

/** The ETag S3 gives a multipart object cut into `partSize` parts. */
function multipartEtag(content: Buffer, partSize: number): string {
  const digests: Buffer[] = [];
  for (let offset = 0; offset < content.length; offset += partSize) digests.push(createHash('md5').update(content.subarray(offset, offset + partSize)).digest());
  return `${createHash('md5').update(Buffer.concat(digests)).digest('hex')}-${digests.length}`;
}

async function readAll(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream) parts.push(chunk as Buffer);
  return Buffer.concat(parts);
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

let state: RgwState;
let bucket: string;
let admin: S3Client;
const adapters: S3Storage[] = [];

function storage(extra: Record<string, unknown> = {}, context: Partial<AdapterContext> = {}): S3Storage {
  const adapter = new S3Storage(s3StorageConfig.parse(rgwConfig(state, bucket, extra)), { logger: silentLogger, ...context });
  adapters.push(adapter);
  return adapter;
}

async function pendingUploads(): Promise<string[]> {
  const page = await admin.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
  return (page.Uploads ?? []).map((upload) => upload.Key ?? '');
}

beforeAll(async () => {
  state = await rgw();
  bucket = await freshBucket(state);
  admin = adminClient(state);
});
afterAll(async () => {
  for (const adapter of adapters) await adapter.dispose();
  await removeBucket(state, bucket);
  admin.destroy();
});

describe('storage-s3 against Ceph RADOS Gateway (real S3)', () => {
  it('uploads 40 MiB as a multipart upload of 8 x 5 MiB parts, 4 in parallel, and reads it back intact', async () => {
    const logger = recordingLogger();
    const adapter = storage({ partSizeMiB: 5, parallelParts: 4, prefix: 'multi' }, { logger });
    const body = randomBody(40 * MiB);
    const result = await adapter.put('big/forty.bin', Readable.from(body.chunks));
    expect(result).toEqual({ key: 'big/forty.bin', size: 40 * MiB });
    // Seen at the server: a multipart ETag is md5(md5(part 1) + ... + md5(part n)) + "-n", so it matches only if
    // the server stored exactly eight 5 MiB parts.
    const head = await admin.send(new HeadObjectCommand({ Bucket: bucket, Key: 'multi/big/forty.bin' }));
    expect(head.ETag).toBe(`"${multipartEtag(body.content, 5 * MiB)}"`);
    expect(head.ETag).toMatch(/-8"$/);
    const done = logger.entries.find((entry) => entry.msg === 's3 multipart upload completed')?.obj as { parts: number; maxPartsInFlight: number };
    expect(done.parts).toBe(8);
    expect(done.maxPartsInFlight).toBeGreaterThan(1);
    expect(done.maxPartsInFlight).toBeLessThanOrEqual(4);
    const back = await readAll(await adapter.get('big/forty.bin'));
    expect(createHash('sha256').update(back).digest('hex')).toBe(body.sha256);
    expect(await pendingUploads()).toEqual([]);
  });

  it('aborting mid-upload aborts the multipart upload on the server: no upload, no object left', async () => {
    const adapter = storage({ partSizeMiB: 5, parallelParts: 2 });
    const controller = new AbortController();
    let seen = 0;
    const trip = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        seen += chunk.length;
        if (seen >= 17 * MiB && !controller.signal.aborted) setImmediate(() => controller.abort());
        callback(null, chunk);
      },
    });
    const error = await adapter
      .put('abort/cut.bin', Readable.from(randomBody(40 * MiB).chunks).pipe(trip), { signal: controller.signal })
      .catch((failure: unknown) => failure);
    expect(isAdapterError(error) && error.code).toBe('ABORTED');
    expect(seen).toBeGreaterThan(10 * MiB); // the upload had started parts before the abort
    expect(await pendingUploads()).toEqual([]);
    await expect(adapter.stat('abort/cut.bin')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('a body that fails after several parts leaves no multipart upload and no object', async () => {
    const adapter = storage({ partSizeMiB: 5, parallelParts: 3 });
    const chunks = randomBody(16 * MiB).chunks;
    const failing = Readable.from(
      (async function* () {
        yield* chunks;
        throw new Error('source died');
      })(),
    );
    await expect(adapter.put('broken/x.bin', failing)).rejects.toThrow(/source died/);
    expect(await pendingUploads()).toEqual([]);
    await expect(adapter.get('broken/x.bin')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('reads ranges equal to the slice of the original, across part boundaries', async () => {
    const adapter = storage({ partSizeMiB: 5 });
    const body = randomBody(12 * MiB + 123);
    await adapter.put('range/r.bin', Readable.from(body.chunks), { size: body.content.length });
    const slice = async (start: number, end?: number) => readAll(await adapter.get('range/r.bin', { range: { start, end } }));
    expect((await slice(5 * MiB - 10, 5 * MiB + 9)).equals(body.content.subarray(5 * MiB - 10, 5 * MiB + 10))).toBe(true);
    expect((await slice(12 * MiB)).equals(body.content.subarray(12 * MiB))).toBe(true);
    expect((await slice(100, 12 * MiB + 5_000)).equals(body.content.subarray(100))).toBe(true);
    await expect(adapter.get('range/r.bin', { range: { start: 13 * MiB } })).rejects.toMatchObject({ code: 'CONFIG' });
    await expect(adapter.get('range/r.bin', { range: { start: 10, end: 5 } })).rejects.toMatchObject({ code: 'CONFIG' });
  });

  it('signs with an assigned ACCESS_KEY credential profile when the config has no keys', async () => {
    const profile = { type: 'ACCESS_KEY', accessKeyId: state.accessKeyId, secretAccessKey: state.secretAccessKey };
    const adapter = storage({ accessKeyId: undefined, secretAccessKey: undefined }, { credentials: { primary: profile } });
    expect((await adapter.check()).ok).toBe(true);
    await adapter.put('profile/p.txt', Readable.from([Buffer.from('via profile')]));
    expect((await readAll(await adapter.get('profile/p.txt'))).toString()).toBe('via profile');
  });

  it('removeIncomplete() aborts the unfinished uploads of that key only', async () => {
    await admin.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'crash/run-1.bin' }));
    await admin.send(new CreateMultipartUploadCommand({ Bucket: bucket, Key: 'crash/run-1.bin.other' }));
    await storage().removeIncomplete('crash/run-1.bin');
    expect(await pendingUploads()).toEqual(['crash/run-1.bin.other']);
    await storage().removeIncomplete('crash/run-1.bin.other');
    expect(await pendingUploads()).toEqual([]);
  });

  it('sends the storage class: STANDARD is recorded, a class the server lacks fails the put with CONFIG and leaves nothing', async () => {
    await storage({ storageClass: 'STANDARD' }).put('class/std.bin', Readable.from([Buffer.from('x')]));
    expect((await admin.send(new HeadObjectCommand({ Bucket: bucket, Key: 'class/std.bin' }))).StorageClass ?? 'STANDARD').toBe('STANDARD');
    const glacier = storage({ storageClass: 'GLACIER', partSizeMiB: 5 });
    await expect(glacier.put('class/g.bin', Readable.from(randomBody(6 * MiB).chunks))).rejects.toMatchObject({ code: 'CONFIG' });
    expect(await pendingUploads()).toEqual([]);
    await expect(glacier.stat('class/g.bin')).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });
});

describe('storage-s3 failures against Ceph RADOS Gateway: each check names its cause', () => {
  it('wrong secret: failed check naming the signature mismatch, without the secret', async () => {
    const result = await storage({ secretAccessKey: 'definitely-the-wrong-secret' }).check();
    expect(result.ok).toBe(false);
    expect(result.message).toMatch(/^\[storage-s3\] check of .* failed: SignatureDoesNotMatch, HTTP 403/);
    expect(result.message).toContain('secret access key is wrong');
    expect(result.message).not.toContain('definitely-the-wrong-secret');
  });

  it('unknown access key: failed check naming InvalidAccessKeyId', async () => {
    const result = await storage({ accessKeyId: 'NOSUCHACCESSKEY' }).check();
    expect(result.ok).toBe(false);
    expect(result.message).toContain('InvalidAccessKeyId');
    expect(result.message).toContain('access key id is unknown');
  });

  it('missing bucket: failed check naming NoSuchBucket', async () => {
    const adapter = new S3Storage(s3StorageConfig.parse(rgwConfig(state, 'holdfast-missing-bucket-x')), { logger: silentLogger });
    const result = await adapter.check();
    await adapter.dispose();
    expect(result.ok).toBe(false);
    expect(result.message).toContain('NoSuchBucket');
    expect(result.message).toContain('the bucket does not exist');
  });

  it('unknown host (127.0.0.1 on a closed port): failed check naming the refused connection', async () => {
    const port = await closedPort();
    const result = await storage({ endpoint: `http://127.0.0.1:${port}` }).check();
    expect(result.ok).toBe(false);
    expect(result.message).toContain(`127.0.0.1:${port}`);
    expect(result.message).toContain('ECONNREFUSED');
    expect(result.message).toContain('nothing listens at the endpoint');
  });

  it('a good check writes nothing: no object and no multipart upload remain', async () => {
    const checkBucket = await freshBucket(state);
    const adapter = new S3Storage(s3StorageConfig.parse(rgwConfig(state, checkBucket, { prefix: 'p' })), { logger: silentLogger });
    try {
      const result = await adapter.check();
      expect(result.ok, result.message).toBe(true);
      const uploads = await admin.send(new ListMultipartUploadsCommand({ Bucket: checkBucket }));
      expect(uploads.Uploads ?? []).toEqual([]);
      const listed: string[] = [];
      for await (const entry of adapter.list('')) listed.push(entry.key);
      expect(listed).toEqual([]);
    } finally {
      await adapter.dispose();
      await removeBucket(state, checkBucket);
    }
  });

  it('list() with wrong credentials throws AUTH instead of yielding an empty listing', async () => {
    const adapter = storage({ secretAccessKey: 'wrong-secret-for-list' });
    const error = await (async () => {
      for await (const entry of adapter.list('')) void entry;
    })().catch((failure: unknown) => failure);
    expect(isAdapterError(error) && error.code).toBe('AUTH');
  });
});
