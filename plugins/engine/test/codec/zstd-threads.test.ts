import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { compressionSidecarInfo, resolveCompressionThreads, ZSTD_FRAME_BYTES, ZSTD_THREADS } from '../../src/codec/compression/codecs.js';
import { ParallelBlockCompressor, ParallelZstdCompressor } from '../../src/codec/compression/parallel-zstd.js';
import { createCompressStream, createDecompressStream } from '../../src/codec/compression/streams.js';
import { firstDifference, runThrough } from './helpers.js';

/** About 22 MiB of dump-like text with random ids: many frames of ZSTD_FRAME_BYTES, and not trivially compressible. */
function dumpText(rows = 260_000): Buffer {
  const lines: string[] = [];
  for (let row = 0; row < rows; row++) {
    lines.push(`INSERT INTO public.orders VALUES (${row}, '${randomBytes(6).toString('hex')}', ${(row * 37) % 10_000}.25, 'customer ${row % 977}', 'shipped');\n`);
  }
  return Buffer.from(lines.join(''));
}

/** Runs the system's `zstd -d` over `input` (the reference decoder, independent of Holdfast's binding). */
async function zstdCliDecompress(input: Buffer): Promise<Buffer> {
  const child = spawn('zstd', ['-d', '-c', '-q'], { stdio: ['pipe', 'pipe', 'pipe'] });
  const output: Buffer[] = [];
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => output.push(chunk));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  child.stdin.end(input);
  const code = await exited;
  if (code !== 0) throw new Error(`zstd -d exited ${code}: ${stderr}`);
  return Buffer.concat(output);
}

/** Counts zstd frames by walking the frame headers' magic numbers from the start (frames are concatenated). */
function frameCount(compressed: Buffer): number {
  let count = 0;
  for (let offset = compressed.indexOf(ZSTD_MAGIC); offset !== -1; offset = compressed.indexOf(ZSTD_MAGIC, offset + 4)) count++;
  return count;
}
const ZSTD_MAGIC = Buffer.from('28b52ffd', 'hex');

describe('ZSTD in frames compressed at once', () => {
  const data = dumpText();

  for (const threads of [1, 2, 4]) {
    it(`${threads} thread(s): output is a concatenation of frames that zstd -d and Holdfast's restore both read`, async () => {
      const compressed = await runThrough(createCompressStream('ZSTD', { threads }), data, 65_536);
      expect(compressed.length).toBeLessThan(data.length / 2);
      // At least one frame per started ZSTD_FRAME_BYTES of input (the magic number may also occur inside a frame).
      expect(frameCount(compressed)).toBeGreaterThanOrEqual(Math.ceil(data.length / ZSTD_FRAME_BYTES));
      expect(firstDifference(await zstdCliDecompress(compressed), data)).toBe('identical');
      expect(firstDifference(await runThrough(createDecompressStream('ZSTD'), compressed, 9_973), data)).toBe('identical');
    });
  }

  it('keeps input order when later frames finish first (a slow frame of text, then fast frames of zeros)', async () => {
    // Text at level 12 takes far longer than zeros, so the threads hand back frames 2 and 3 before frame 1.
    const mixed = Buffer.concat([data.subarray(0, ZSTD_FRAME_BYTES), Buffer.alloc(3 * ZSTD_FRAME_BYTES, 0), data.subarray(0, 1000)]);
    const compressed = await runThrough(createCompressStream('ZSTD', { level: 12, threads: 3 }), mixed, 100_003);
    expect(firstDifference(await zstdCliDecompress(compressed), mixed)).toBe('identical');
  });

  it('a stream written with the earlier 2 MiB frames (backups before 2026-11-28) still decodes', async () => {
    expect(ZSTD_FRAME_BYTES).toBeLessThan(2 * 1024 * 1024);
    const earlier = new ParallelZstdCompressor({ level: 3, threads: 2, frameBytes: 2 * 1024 * 1024 });
    const compressed = await runThrough(earlier, data, 65_536);
    expect(frameCount(compressed)).toBeGreaterThanOrEqual(Math.ceil(data.length / (2 * 1024 * 1024)));
    expect(firstDifference(await runThrough(createDecompressStream('ZSTD'), compressed, 9_973), data)).toBe('identical');
  });

  it('writes a valid empty stream for an empty input and a short one for less than a frame', async () => {
    const empty = await runThrough(createCompressStream('ZSTD', { threads: 2 }), Buffer.alloc(0));
    expect(empty.length).toBeGreaterThan(0);
    expect(await zstdCliDecompress(empty)).toHaveLength(0);
    const short = data.subarray(0, 12_345);
    const compressed = await runThrough(createCompressStream('ZSTD', { threads: 2 }), short);
    expect(firstDifference(await zstdCliDecompress(compressed), short)).toBe('identical');
  });

  it('holds the source back while the destination is slow (bounded frames in flight)', async () => {
    const threads = 2;
    const pieces = 40;
    let produced = 0;
    let consumed = 0;
    let maxAhead = 0;
    // Random bytes: the frames are as large as their input, so the slow sink really receives megabytes.
    const piece = randomBytes(1024 * 1024);
    const source = Readable.from(
      (function* () {
        for (let index = 0; index < pieces; index++) {
          produced += piece.length;
          yield piece;
        }
      })(),
    );
    const slowSink = new Writable({
      highWaterMark: 1,
      write(chunk: Buffer, _encoding, callback) {
        consumed += chunk.length;
        maxAhead = Math.max(maxAhead, produced - consumed);
        setTimeout(callback, 40);
      },
    });
    await pipeline(source, createCompressStream('ZSTD', { threads, level: 1 }), slowSink);
    expect(consumed).toBeGreaterThanOrEqual(pieces * piece.length);
    // Without backpressure the source would run all 40 MiB ahead of the sink. Bounded: up to threads + 1 blocks out
    // (compressing, or finished and not yet taken by the sink) when a piece arrives, plus the blocks that piece
    // fills, the block being filled, the frame waiting in the sink's buffer, and a piece each in the source's and
    // the compressor's write buffers.
    const blocksPerPiece = Math.ceil(piece.length / ZSTD_FRAME_BYTES);
    expect(maxAhead).toBeLessThanOrEqual((threads + 3 + blocksPerPiece) * ZSTD_FRAME_BYTES + 2 * piece.length);
  });

  it('a slow first frame holds the source back: frames finished out of order count as out until pushed', async () => {
    // CI once saw the source 15 MiB ahead: frames that finished before an earlier, slower one no longer counted, so
    // more blocks were sent while they waited in memory. Here block 0 takes 300 ms and every other block is instant.
    const threads = 2;
    const frameBytes = 64 * 1024;
    let sentBeforeFirstReturned = 0;
    let firstReturned = false;
    const compressor = new ParallelBlockCompressor({
      threads,
      frameBytes,
      compressBlock: (block, length, done) => {
        if (!firstReturned) sentBeforeFirstReturned++;
        const frame = Buffer.from(block.subarray(0, length));
        if (sentBeforeFirstReturned === 1 && !firstReturned) {
          setTimeout(() => {
            firstReturned = true;
            done(null, frame, block);
          }, 300);
        } else setImmediate(() => done(null, frame, block));
      },
    });
    const input = randomBytes(40 * frameBytes);
    const output = await runThrough(compressor, input, frameBytes);
    expect(firstDifference(output, input)).toBe('identical');
    expect(sentBeforeFirstReturned).toBe(threads + 2);
  });

  it('fails the stream, not the process, when the input stream errors midway', async () => {
    const failing = Readable.from(
      (function* () {
        yield data.subarray(0, 5 * ZSTD_FRAME_BYTES);
        throw new Error('source broke');
      })(),
    );
    const sink = new Writable({ write: (_chunk, _encoding, callback) => callback() });
    await expect(pipeline(failing, createCompressStream('ZSTD', { threads: 2 }), sink)).rejects.toThrow('source broke');
  });
});

describe('ZSTD thread option', () => {
  it('accepts 1 to 16 threads and records them in the sidecar', () => {
    expect(resolveCompressionThreads('ZSTD', 1)).toBe(1);
    expect(resolveCompressionThreads('ZSTD', 16)).toBe(16);
    expect(resolveCompressionThreads('ZSTD')).toBeGreaterThanOrEqual(1);
    expect(compressionSidecarInfo('ZSTD', { level: 5, threads: 3 })).toEqual({ codec: 'ZSTD', level: 5, extension: '.zst', threads: 3, frameBytes: ZSTD_FRAME_BYTES });
  });

  it('rejects thread counts out of range and threads for other codecs, naming the range', () => {
    expect(() => createCompressStream('ZSTD', { threads: 0 })).toThrow(`ZSTD compression threads must be an integer from ${ZSTD_THREADS.min} to ${ZSTD_THREADS.max}, got 0`);
    expect(() => createCompressStream('ZSTD', { threads: 17 })).toThrow('from 1 to 16, got 17');
    expect(() => createCompressStream('ZSTD', { threads: 1.5 })).toThrow('got 1.5');
    expect(() => createCompressStream('GZIP', { threads: 2 })).toThrow('compression threads apply to ZSTD only, not GZIP');
    expect(() => createCompressStream('ZSTD', { level: 20, threads: 2 })).toThrow('from 1 to 19, got 20');
  });
});
