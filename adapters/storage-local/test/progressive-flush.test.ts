import { closeSync, fdatasync, openSync, write } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ProgressiveFlush, type DataSync } from '../src/internal/progressive-flush.js';

const KiB = 1024;

/** A sync that records its calls and completes only when the test releases it. */
function heldSync() {
  const calls: Array<{ fd: number; release: (error?: NodeJS.ErrnoException) => void }> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const sync: DataSync = (fd, callback) => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    calls.push({
      fd,
      release: (error) => {
        inFlight -= 1;
        callback(error ?? null);
      },
    });
  };
  return { sync, calls, maxInFlight: () => maxInFlight };
}

/** Collects what passes through. */
function sink(): Writable & { bytes: Buffer[] } {
  const bytes: Buffer[] = [];
  return Object.assign(
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        bytes.push(chunk);
        callback();
      },
    }),
    { bytes },
  );
}

const pieces = (count: number, size: number) => Array.from({ length: count }, (_, index) => Buffer.alloc(size, index));

describe('ProgressiveFlush', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'holdfast-flush-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('flushes once per interval of bytes, on the given descriptor, while the bytes pass through unchanged', async () => {
    const calls: number[] = [];
    const sync: DataSync = (fd, callback) => {
      calls.push(fd);
      setImmediate(() => callback(null));
    };
    const out = sink();
    const input = pieces(40, 16 * KiB); // 640 KiB
    await pipeline(Readable.from(input), new ProgressiveFlush(42, 128 * KiB, sync), out);
    expect(Buffer.concat(out.bytes).equals(Buffer.concat(input))).toBe(true);
    // 640 KiB in 128 KiB intervals: a flush after each full interval (a flush still running when the next interval
    // fills is not doubled, so at most five).
    expect(calls.length).toBeGreaterThanOrEqual(1);
    expect(calls.length).toBeLessThanOrEqual(5);
    expect(new Set(calls)).toEqual(new Set([42]));
  });

  it('never runs two flushes at once, and the end of the stream waits for the one in flight', async () => {
    const held = heldSync();
    const flusher = new ProgressiveFlush(7, 32 * KiB, held.sync);
    const out = sink();
    let ended = false;
    const done = pipeline(Readable.from(pieces(16, 16 * KiB)), flusher, out).then(() => (ended = true));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Every byte has gone through, but the first flush is still held: the stream has not ended.
    expect(Buffer.concat(out.bytes).length).toBe(256 * KiB);
    expect(held.calls).toHaveLength(1);
    expect(ended).toBe(false);
    held.calls[0]?.release();
    await done;
    expect(ended).toBe(true);
    expect(held.maxInFlight()).toBe(1);
  });

  it('fails the stream with the file-system error of a failed flush (a write-back error is reported only once)', async () => {
    const failing: DataSync = (_fd, callback) => setImmediate(() => callback(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' })));
    const error = await pipeline(Readable.from(pieces(64, 16 * KiB)), new ProgressiveFlush(3, 32 * KiB, failing), sink()).then(
      () => null,
      (caught: NodeJS.ErrnoException) => caught,
    );
    expect(error?.code).toBe('EIO');
    expect(error?.message).toContain('fdatasync');
  });

  it('reports a flush that fails after the last byte when the stream ends', async () => {
    const held = heldSync();
    const done = pipeline(Readable.from(pieces(2, 32 * KiB)), new ProgressiveFlush(5, 32 * KiB, held.sync), sink());
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(held.calls).toHaveLength(1);
    held.calls[0]?.release(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' }));
    await expect(done).rejects.toMatchObject({ code: 'ENOSPC' });
  });

  it('flushes a real file with fdatasync and leaves its bytes intact', async () => {
    const path = join(dir, 'file');
    const fd = openSync(path, 'w');
    let flushes = 0;
    const counting: DataSync = (descriptor, callback) => {
      flushes += 1;
      fdatasync(descriptor, callback);
    };
    const input = pieces(32, 64 * KiB);
    const file = new Writable({
      write(chunk: Buffer, _encoding, callback) {
        write(fd, chunk, 0, chunk.length, null, (error) => callback(error));
      },
    });
    await pipeline(Readable.from(input), new ProgressiveFlush(fd, 256 * KiB, counting), file);
    closeSync(fd);
    expect(flushes).toBeGreaterThanOrEqual(1);
    expect((await readFile(path)).equals(Buffer.concat(input))).toBe(true);
  });
});
