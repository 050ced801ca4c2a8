import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import zlib, { gunzipSync, gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import {
  CODEC_EXTENSIONS,
  CODEC_LEVELS,
  COMPRESSION_CODECS,
  compressionSidecarInfo,
  defaultZstdThreads,
  parseCompressionCodec,
  resolveCompressionLevel,
  ZSTD_FRAME_BYTES,
  type CompressionCodec,
} from '../../src/codec/compression/codecs.js';
import { createCompressStream, createDecompressStream, isCodecAvailable } from '../../src/codec/compression/streams.js';
import { firstDifference, runThrough, runUntilError } from './helpers.js';

/** Text that compresses like a SQL dump, mixed with some incompressible bytes, about 3 MiB. */
function dumpLikeData(): Buffer {
  const lines: string[] = [];
  for (let row = 0; row < 40_000; row++) {
    lines.push(`INSERT INTO public.orders VALUES (${row}, 'customer ${row % 977}', ${(row * 37) % 10_000}.25, 'shipped');\n`);
  }
  return Buffer.concat([Buffer.from(lines.join('')), randomBytes(64 * 1024)]);
}

const FRAME_MAGIC: Partial<Record<CompressionCodec, string>> = { GZIP: '1f8b', ZSTD: '28b52ffd' };

describe('compression codecs', () => {
  const data = dumpLikeData();

  it('has all four codecs available here, ZSTD included', () => {
    expect(COMPRESSION_CODECS.filter((codec) => isCodecAvailable(codec))).toEqual(['NONE', 'GZIP', 'BROTLI', 'ZSTD']);
  });

  for (const codec of COMPRESSION_CODECS) {
    it(`${codec} round-trips a streamed dump byte for byte`, async () => {
      const compressed = await runThrough(createCompressStream(codec), data, 16_384);
      if (codec === 'NONE') expect(compressed.equals(data)).toBe(true);
      else expect(compressed.length).toBeLessThan(data.length / 3);
      const magic = FRAME_MAGIC[codec];
      if (magic) expect(compressed.subarray(0, magic.length / 2).toString('hex')).toBe(magic);
      const restored = await runThrough(createDecompressStream(codec), compressed, 10_007);
      expect(firstDifference(restored, data)).toBe('identical');
    });
  }

  for (const codec of ['GZIP', 'BROTLI', 'ZSTD'] as const) {
    it(`${codec} honours its lowest and highest level and round-trips the empty input`, async () => {
      const { min, max } = CODEC_LEVELS[codec];
      const sample = data.subarray(0, 200_000);
      const fast = await runThrough(createCompressStream(codec, min), sample);
      const small = await runThrough(createCompressStream(codec, max), sample);
      expect(small.length).toBeLessThan(fast.length);
      expect(firstDifference(await runThrough(createDecompressStream(codec), small), sample)).toBe('identical');
      const empty = await runThrough(createCompressStream(codec), Buffer.alloc(0));
      expect(empty.length).toBeGreaterThan(0);
      expect(await runThrough(createDecompressStream(codec), empty)).toHaveLength(0);
    });

    it(`${codec} decompression fails on data that is not ${codec}`, async () => {
      // Fixed text, not random bytes: brotli has no magic number and about 4% of random buffers decode as valid.
      const { error } = await runUntilError(createDecompressStream(codec), Buffer.from('plain text, not a compressed stream. '.repeat(100)));
      expect(error).toBeInstanceOf(Error);
    });
  }

  it('writes standard gzip that any gunzip reads', async () => {
    const compressed = await runThrough(createCompressStream('GZIP', 9), data);
    expect(gunzipSync(compressed).equals(data)).toBe(true);
  });

  it('writes GZIP as one member per block, in input order, that GNU gunzip reads as one stream', async () => {
    // 3 blocks and a bit: the members are compressed at the same time and must still come out in order.
    const big = Buffer.concat([data, data, data.subarray(0, ZSTD_FRAME_BYTES)]);
    expect(big.length).toBeGreaterThan(3 * ZSTD_FRAME_BYTES);
    const compressed = await runThrough(createCompressStream('GZIP'), big, 65_536);
    const members = countGzipMembers(compressed);
    expect(members).toBe(Math.ceil(big.length / ZSTD_FRAME_BYTES));
    const gunzip = spawnSync('gunzip', ['-c'], { input: compressed, maxBuffer: 64 * 1024 * 1024 });
    expect(gunzip.status).toBe(0);
    expect(firstDifference(gunzip.stdout, big)).toBe('identical');
    // Independent members cost little: within 1 % of one deflate stream at the same level.
    const single = gzipSync(big, { level: 3 });
    expect(compressed.length).toBeLessThan(single.length * 1.01);
  });
});

/** Gzip members of a buffer: each is a 10-byte header (Node writes no optional fields), raw deflate, 8-byte trailer. */
function countGzipMembers(bytes: Buffer): number {
  let members = 0;
  for (let offset = 0; offset < bytes.length; members += 1) {
    expect(bytes.subarray(offset, offset + 2).toString('hex')).toBe('1f8b');
    const inflated = zlib.inflateRawSync(bytes.subarray(offset + 10), { info: true }) as unknown as { engine: { bytesWritten: number } };
    offset += 10 + inflated.engine.bytesWritten + 8;
  }
  return members;
}

describe('compression settings', () => {
  it('uses the documented defaults and extensions', () => {
    expect(resolveCompressionLevel('GZIP')).toBe(3);
    expect(resolveCompressionLevel('BROTLI')).toBe(3);
    expect(resolveCompressionLevel('ZSTD')).toBe(3);
    expect(resolveCompressionLevel('NONE')).toBeUndefined();
    expect(CODEC_EXTENSIONS).toEqual({ NONE: '', GZIP: '.gz', BROTLI: '.br', ZSTD: '.zst' });
    expect(compressionSidecarInfo('ZSTD', 7)).toEqual({ codec: 'ZSTD', level: 7, extension: '.zst', threads: defaultZstdThreads(), frameBytes: ZSTD_FRAME_BYTES });
    expect(compressionSidecarInfo('GZIP', 7)).toEqual({ codec: 'GZIP', level: 7, extension: '.gz' });
    expect(compressionSidecarInfo('NONE')).toEqual({ codec: 'NONE', extension: '' });
  });

  it('rejects out-of-range levels with the allowed range', () => {
    expect(() => createCompressStream('GZIP', 10)).toThrow('GZIP compression level must be an integer from 1 to 9, got 10');
    expect(() => createCompressStream('BROTLI', -1)).toThrow('from 0 to 11, got -1');
    expect(() => createCompressStream('ZSTD', 2.5)).toThrow('from 1 to 19, got 2.5');
    expect(() => createCompressStream('NONE', 3)).toThrow('compression codec NONE takes no level');
  });

  it('rejects unknown codecs and lists the known ones', () => {
    const expected = 'unknown compression codec "LZMA"; expected one of NONE, GZIP, BROTLI, ZSTD';
    expect(() => parseCompressionCodec('LZMA')).toThrow(expected);
    expect(() => createCompressStream('LZMA' as CompressionCodec)).toThrow(expected);
    expect(() => createDecompressStream('LZMA' as CompressionCodec)).toThrow(expected);
    expect(parseCompressionCodec(' gzip ')).toBe('GZIP');
  });
});
