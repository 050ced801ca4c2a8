// The process-wide ZSTD thread pool (issue 21): threads are reused across streams, end by themselves when idle, are
// never terminated while loading the binding (that aborted the whole process), and a thread that never answers fails
// its stream with a clear error instead of hanging the backup.
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { ZSTD_FRAME_BYTES } from '../../src/codec/compression/codecs.js';
import { ParallelZstdCompressor } from '../../src/codec/compression/parallel-zstd.js';
import { createDecompressStream } from '../../src/codec/compression/streams.js';
import { ZstdWorkerPool } from '../../src/codec/compression/zstd-worker-pool.js';
import { firstDifference, runThrough } from './helpers.js';

const threadCount = () => readdirSync('/proc/self/task').length;

async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

async function roundTrip(pool: ZstdWorkerPool, input: Buffer, threads: number): Promise<void> {
  const compressed = await runThrough(new ParallelZstdCompressor({ level: 3, threads, frameBytes: ZSTD_FRAME_BYTES, pool }), input, 65_536);
  expect(firstDifference(await runThrough(createDecompressStream('ZSTD'), compressed), input)).toBe('identical');
}

describe('ZSTD worker pool', () => {
  it('reuses its threads across many short streams instead of starting (and stopping) threads per stream', async () => {
    // Two frames with four threads asked for: before the shared pool, each of these streams started four threads and
    // terminated the two or three still loading the binding, which aborted the process about once in fifty streams.
    const pool = new ZstdWorkerPool();
    const input = randomBytes(ZSTD_FRAME_BYTES + 1000);
    for (let stream = 0; stream < 40; stream++) await roundTrip(pool, input, 4);
    expect(pool.started).toBeLessThanOrEqual(4);
    expect(pool.size).toBe(pool.started);
  });

  it('lets idle threads end by themselves, and starts new ones for the next stream', async () => {
    const pool = new ZstdWorkerPool({ idleMs: 300 });
    const before = threadCount();
    await roundTrip(pool, randomBytes(3 * ZSTD_FRAME_BYTES), 3);
    expect(pool.size).toBe(3);
    expect(threadCount()).toBeGreaterThanOrEqual(before + 3);
    await waitFor(() => pool.size === 0, 'the idle threads to leave the pool');
    await waitFor(() => threadCount() <= before, 'the idle threads to end');
    await roundTrip(pool, randomBytes(1000), 2);
    expect(pool.started).toBe(4);
  });

  it('fails the stream naming the timeout when a thread never returns its frame, and abandons that thread', async () => {
    const silent = `require('node:worker_threads').parentPort.on('message', () => {}); setTimeout(() => process.exit(0), 3000);`;
    const pool = new ZstdWorkerPool({ frameTimeoutMs: 300, workerSource: silent });
    const sink = new Writable({ write: (_chunk, _encoding, callback) => callback() });
    const stream = new ParallelZstdCompressor({ level: 3, threads: 2, frameBytes: ZSTD_FRAME_BYTES, pool });
    await expect(pipeline(Readable.from([randomBytes(5000)]), stream, sink)).rejects.toThrow('zstd compression worker returned no frame within 0.3 s; its thread was abandoned');
    expect(pool.size).toBe(0);
  });

  it('keeps serving other streams after one stream fails midway', async () => {
    const pool = new ZstdWorkerPool();
    const failing = Readable.from(
      (function* () {
        yield randomBytes(3 * ZSTD_FRAME_BYTES);
        throw new Error('source broke');
      })(),
    );
    const sink = new Writable({ write: (_chunk, _encoding, callback) => callback() });
    await expect(pipeline(failing, new ParallelZstdCompressor({ level: 3, threads: 2, frameBytes: ZSTD_FRAME_BYTES, pool }), sink)).rejects.toThrow('source broke');
    await roundTrip(pool, randomBytes(2 * ZSTD_FRAME_BYTES + 17), 2);
    expect(pool.started).toBe(2);
  });
});
