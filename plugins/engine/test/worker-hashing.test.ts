import { createHashingPassThrough } from '@holdfast/kernel';
import { randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { RING_BYTES, createWorkerHashingPassThrough } from '../src/run/worker-hashing.js';

/** Chunks of random sizes (1 byte up to a bit over the ring) of random data, `total` bytes in all. */
function randomChunks(total: number): Buffer[] {
  const chunks: Buffer[] = [];
  let left = total;
  while (left > 0) {
    const size = Math.min(left, 1 + Math.floor(Math.random() * (Math.random() < 0.1 ? RING_BYTES + 4096 : 300_000)));
    chunks.push(randomBytes(size));
    left -= size;
  }
  return chunks;
}

async function digestsOf(chunks: Buffer[], hasher: ReturnType<typeof createHashingPassThrough> | ReturnType<typeof createWorkerHashingPassThrough>, slowConsumer = false) {
  const passed: Buffer[] = [];
  const sink = new Writable({
    highWaterMark: 64 * 1024,
    write(chunk: Buffer, _encoding, callback) {
      passed.push(chunk);
      if (slowConsumer) setImmediate(callback);
      else callback();
    },
  });
  await pipeline(Readable.from(chunks), hasher, sink);
  return { digests: hasher.digests(), passed: Buffer.concat(passed) };
}

describe('WorkerHashingPassThrough', () => {
  it('gives the in-process hasher digests on random data of random chunk sizes, passing every byte on unchanged', async () => {
    for (const total of [0, 1, 777, RING_BYTES - 1, RING_BYTES, 3 * RING_BYTES + 12_345]) {
      const chunks = randomChunks(total);
      const expected = await digestsOf(chunks, createHashingPassThrough());
      const actual = await digestsOf(chunks, createWorkerHashingPassThrough(), total % 2 === 1);
      expect(actual.digests, `${total} bytes`).toEqual(expected.digests);
      expect(actual.digests.bytes).toBe(total);
      expect(actual.passed.equals(Buffer.concat(chunks))).toBe(true);
    }
  }, 60_000);

  it('reports the digests only after the stream finished, and a destroyed stream stops its worker', async () => {
    const hasher = createWorkerHashingPassThrough();
    expect(() => hasher.digests()).toThrow(/before the stream finished/);
    hasher.write(randomBytes(1000));
    const closed = new Promise((resolve) => hasher.once('close', resolve));
    hasher.destroy(new Error('consumer went away'));
    hasher.on('error', () => undefined);
    await closed;
    expect(() => hasher.digests()).toThrow(/before the stream finished/);
  });
});

describe('streamBackup with HOLDFAST_HASH_WORKER=on', () => {
  it('stores the same bytes with the same checksums as the main-thread hasher, and they are the stored bytes\' digests', async () => {
    const { streamBackup } = await import('../src/run/backup-pipeline.js');
    const { createHash } = await import('node:crypto');
    const source = Buffer.concat(randomChunks(3 * RING_BYTES + 999));
    const backup = async (hashWorker: string) => {
      const stored: Buffer[] = [];
      const storage = {
        configId: 'c',
        name: 'memory',
        adapterId: 'memory',
        capabilities: {},
        adapter: {
          async put(_key: string, body: Readable) {
            for await (const chunk of body) stored.push(chunk as Buffer);
            return { size: stored.reduce((sum, chunk) => sum + chunk.length, 0) };
          },
        },
      };
      const before = process.env.HOLDFAST_HASH_WORKER;
      process.env.HOLDFAST_HASH_WORKER = hashWorker;
      try {
        const result = await streamBackup({
          dump: Readable.from([source.subarray(0, 100_000), source.subarray(100_000)]),
          codec: 'GZIP',
          externalCompressor: null,
          encryptionKey: null,
          storages: [storage as never],
          key: 'k',
          signal: new AbortController().signal,
          onBytes: () => undefined,
        });
        return { digests: result.digests, stored: Buffer.concat(stored) };
      } finally {
        if (before === undefined) delete process.env.HOLDFAST_HASH_WORKER;
        else process.env.HOLDFAST_HASH_WORKER = before;
      }
    };
    const onMain = await backup('off');
    const onWorker = await backup('on');
    expect(onWorker.digests).toEqual({
      sha256: createHash('sha256').update(onWorker.stored).digest('hex'),
      md5: createHash('md5').update(onWorker.stored).digest('hex'),
      bytes: onWorker.stored.length,
    });
    expect(onMain.digests).toEqual({
      sha256: createHash('sha256').update(onMain.stored).digest('hex'),
      md5: createHash('md5').update(onMain.stored).digest('hex'),
      bytes: onMain.stored.length,
    });
    // GZIP of the same input at the same level is the same output: the two hashers saw the same bytes.
    expect(onWorker.digests).toEqual(onMain.digests);
  }, 60_000);
});
