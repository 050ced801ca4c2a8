// ZSTD frames are compressed on libuv's thread pool (issue 21, session 15): a stream runs at most `threads` frames
// at once, all streams together stay within the process's compression slots (one pool thread is left for file
// I/O), a failed frame fails its stream and frees its slots, the job's level reaches the binding, and compressing
// starts no thread of its own (the worker threads it replaced cost an isolate each).
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { ZSTD_FRAME_BYTES } from '../../src/codec/compression/codecs.js';
import { ParallelZstdCompressor, type FrameCompressor } from '../../src/codec/compression/parallel-zstd.js';
import { ConcurrencyLimit, threadPoolSize } from '../../src/codec/compression/pool-slots.js';
import { createCompressStream, createDecompressStream } from '../../src/codec/compression/streams.js';
import { compressZstdFrame } from '../../src/codec/compression/zstd-bindings.js';
import { firstDifference, runThrough } from './helpers.js';

/** A stand-in for the binding that records how many frames run at once; each frame takes `ms`. */
function watchedFrames(ms: number, failAt?: number): { compressFrame: FrameCompressor; maxAtOnce: () => number; calls: () => number } {
  let running = 0;
  let max = 0;
  let calls = 0;
  const compressFrame: FrameCompressor = (input) => {
    calls++;
    const call = calls;
    running++;
    max = Math.max(max, running);
    return new Promise((resolve, reject) =>
      setTimeout(() => {
        running--;
        if (call === failAt) reject(new Error('the binding broke'));
        else resolve(Buffer.from(input));
      }, ms),
    );
  };
  return { compressFrame, maxAtOnce: () => max, calls: () => calls };
}

const sink = (): Writable => new Writable({ write: (_chunk, _encoding, callback) => callback() });

describe('ZSTD frames on the thread pool', () => {
  it('compresses at most `threads` frames of a stream at once (more blocks than that are out)', async () => {
    const watched = watchedFrames(20);
    const stream = new ParallelZstdCompressor({ level: 3, threads: 2, frameBytes: 64 * 1024, compressFrame: watched.compressFrame, slots: new ConcurrencyLimit(8) });
    const input = randomBytes(40 * 64 * 1024);
    expect(firstDifference(await runThrough(stream, input, 64 * 1024), input)).toBe('identical');
    expect(watched.calls()).toBe(40);
    expect(watched.maxAtOnce()).toBe(2);
  });

  it('keeps two streams together within the process-wide slots', async () => {
    const watched = watchedFrames(20);
    const slots = new ConcurrencyLimit(3);
    const streams = [0, 1].map(() => new ParallelZstdCompressor({ level: 3, threads: 3, frameBytes: 64 * 1024, compressFrame: watched.compressFrame, slots }));
    const input = randomBytes(20 * 64 * 1024);
    await Promise.all(streams.map((stream) => pipeline(Readable.from([input]), stream, sink())));
    expect(watched.calls()).toBe(40);
    expect(watched.maxAtOnce()).toBe(3);
    expect(slots.active).toBe(0);
  });

  it('fails the stream naming zstd when a frame fails, and frees every slot for the next stream', async () => {
    const slots = new ConcurrencyLimit(2);
    const failing = watchedFrames(5, 3);
    const stream = new ParallelZstdCompressor({ level: 3, threads: 2, frameBytes: 64 * 1024, compressFrame: failing.compressFrame, slots });
    await expect(pipeline(Readable.from([randomBytes(10 * 64 * 1024)]), stream, sink())).rejects.toThrow('zstd compression failed: the binding broke');
    // Frames already sent finish on the pool and give their slots back.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(slots.active).toBe(0);
    const next = new ParallelZstdCompressor({ level: 3, threads: 2, frameBytes: ZSTD_FRAME_BYTES, slots });
    const input = randomBytes(2 * ZSTD_FRAME_BYTES + 17);
    const compressed = await runThrough(next, input, 65_536);
    expect(firstDifference(await runThrough(createDecompressStream('ZSTD'), compressed), input)).toBe('identical');
  });

  it("hands the job's level to the binding", async () => {
    const text = await readFile(new URL(import.meta.url));
    const input = Buffer.concat(Array.from({ length: 20 }, (_, index) => Buffer.concat([text, Buffer.from(String(index))])));
    const fast = await runThrough(createCompressStream('ZSTD', { level: 1, threads: 2 }), input, 65_536);
    const small = await runThrough(createCompressStream('ZSTD', { level: 19, threads: 2 }), input, 65_536);
    expect(small.length).toBeLessThan(fast.length);
    for (const compressed of [fast, small]) expect(firstDifference(await runThrough(createDecompressStream('ZSTD'), compressed), input)).toBe('identical');
  });

  it('compresses the same frames at once as one at a time: calls of several streams and levels share no state', async () => {
    const text = await readFile(new URL(import.meta.url));
    const blocks = Array.from({ length: 24 }, (_, index) => Buffer.concat([randomBytes(4096), text, Buffer.from(String(index))]));
    const levels = [1, 3, 9];
    const oneAtATime: Buffer[] = [];
    for (const [index, block] of blocks.entries()) oneAtATime.push(await compressZstdFrame(block, levels[index % 3]!));
    const atOnce = await Promise.all(blocks.map((block, index) => compressZstdFrame(block, levels[index % 3]!)));
    expect(atOnce.map((frame) => frame.toString('base64'))).toEqual(oneAtATime.map((frame) => frame.toString('base64')));
    const decoded = await runThrough(createDecompressStream('ZSTD'), Buffer.concat(atOnce));
    expect(firstDifference(decoded, Buffer.concat(blocks))).toBe('identical');
  });

  it('starts no thread of its own: four frames at once run on the threads libuv already has', async () => {
    const threads = () => readdirSync('/proc/self/task').length;
    // Start libuv's whole pool first (it starts all its threads at its first task), then count.
    await Promise.all(Array.from({ length: threadPoolSize() }, () => promisify(zlib.gzip)(randomBytes(1024))));
    const before = threads();
    const input = randomBytes(12 * ZSTD_FRAME_BYTES);
    const compressed = await runThrough(createCompressStream('ZSTD', { level: 3, threads: 4 }), input, 65_536);
    expect(threads()).toBe(before);
    expect(firstDifference(await runThrough(createDecompressStream('ZSTD'), compressed), input)).toBe('identical');
  });
});

describe('ConcurrencyLimit', () => {
  it('starts waiting tasks in arrival order as slots are released, and counts a double release once', () => {
    const limit = new ConcurrencyLimit(1);
    const started: number[] = [];
    const releases: Array<() => void> = [];
    for (const task of [1, 2, 3]) {
      limit.run((release) => {
        started.push(task);
        releases.push(release);
      });
    }
    expect(started).toEqual([1]);
    releases[0]!();
    releases[0]!();
    expect(started).toEqual([1, 2]);
    expect(limit.active).toBe(1);
    releases[1]!();
    releases[2]!();
    expect(started).toEqual([1, 2, 3]);
    expect(limit.active).toBe(0);
  });

  it('reads the pool size from UV_THREADPOOL_SIZE, 4 without it', () => {
    expect(threadPoolSize({})).toBe(4);
    expect(threadPoolSize({ UV_THREADPOOL_SIZE: '8' })).toBe(8);
    expect(threadPoolSize({ UV_THREADPOOL_SIZE: 'many' })).toBe(4);
    expect(threadPoolSize({ UV_THREADPOOL_SIZE: '5000' })).toBe(1024);
  });
});
