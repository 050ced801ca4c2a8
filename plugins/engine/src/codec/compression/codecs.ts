// Codec table. The codecs, their level ranges and ZSTD's thread range are the kernel's (shared with the catalog);
// this file adds what only the engine needs. Reasons for the defaults: docs/formats/compression.md.
import { CODEC_LEVELS, COMPRESSION_CODECS, ZSTD_THREADS, type CodecLevels, type CompressionCodec } from '@holdfast/kernel';
import { compressionThreadsForThisMachine } from './pool-slots.js';

export { CODEC_LEVELS, COMPRESSION_CODECS, ZSTD_THREADS, type CodecLevels, type CompressionCodec };

/** File extension appended to a backup written with the codec (empty for NONE). */
export const CODEC_EXTENSIONS: Readonly<Record<CompressionCodec, string>> = {
  NONE: '',
  GZIP: '.gz',
  BROTLI: '.br',
  ZSTD: '.zst',
};

/**
 * Uncompressed bytes per independent frame (a zstd frame, a gzip member) when compressing on threads; `threads + 3`
 * blocks of this size exist per backup. 512 KiB since 2026-11-28: on a 1 GiB PostgreSQL dump (3 alternating backups
 * each, docs/benchmarks.md "Session 7") peak RSS fell from 162-165 to 149-153 MiB (ZSTD) and from 152-158 to
 * 143-144 MiB (GZIP) against 2 MiB frames, at the same speed, and the ZSTD output was 1.6 % smaller (zstd tunes
 * its parameters to the smaller input). Backups written with 2 MiB frames restore as before: decoders read
 * concatenated frames of any size.
 */
export const ZSTD_FRAME_BYTES = 512 * 1024;

/**
 * ZSTD frames compressed at once when the job names none: every core, within the compression slots of libuv's thread
 * pool (its size minus one, so 3 by default; see pool-slots.ts). Compression is the slowest stage of a backup on a
 * small machine, and more frames at once than slots would only wait for one.
 */
export function defaultZstdThreads(): number {
  return compressionThreadsForThisMachine();
}

/** Per-job tuning of the codec; every field optional (the codec's default is used). */
export interface CompressionOptions {
  level?: number | null;
  /** ZSTD only: frames compressed at once (on libuv's thread pool). */
  threads?: number | null;
}

/** The compression in the readable form written into the backup's `.meta.json` sidecar under `compression`. */
export interface CompressionSidecarInfo {
  codec: CompressionCodec;
  /** Undefined for NONE. */
  level?: number;
  extension: string;
  /** ZSTD: frames that were compressed at once when the file was written (informational: any zstd decoder reads it). */
  threads?: number;
  /** ZSTD: uncompressed bytes per independent frame (the file is a concatenation of frames). */
  frameBytes?: number;
}

/** Checks a codec name, accepting any letter case; the error lists the codecs that exist. */
export function parseCompressionCodec(name: string): CompressionCodec {
  const upper = name.trim().toUpperCase();
  const codec = COMPRESSION_CODECS.find((candidate) => candidate === upper);
  if (!codec) {
    throw new RangeError(`unknown compression codec "${name}"; expected one of ${COMPRESSION_CODECS.join(', ')}`);
  }
  return codec;
}

/** The level to use: the codec default when none is given, else the given level after a range check. */
export function resolveCompressionLevel(codec: CompressionCodec, level?: number): number | undefined {
  assertKnownCodec(codec);
  if (codec === 'NONE') {
    if (level !== undefined) throw new RangeError('compression codec NONE takes no level');
    return undefined;
  }
  const range = CODEC_LEVELS[codec];
  if (level === undefined) return range.default;
  if (!Number.isInteger(level) || level < range.min || level > range.max) {
    throw new RangeError(`${codec} compression level must be an integer from ${range.min} to ${range.max}, got ${level}`);
  }
  return level;
}

/** The thread count to use: ZSTD's default when none is given; other codecs take none (they have one stream). */
export function resolveCompressionThreads(codec: CompressionCodec, threads?: number | null): number | undefined {
  assertKnownCodec(codec);
  if (codec !== 'ZSTD') {
    if (threads !== undefined && threads !== null) throw new RangeError(`compression threads apply to ZSTD only, not ${codec}`);
    return undefined;
  }
  if (threads === undefined || threads === null) return defaultZstdThreads();
  if (!Number.isInteger(threads) || threads < ZSTD_THREADS.min || threads > ZSTD_THREADS.max) {
    throw new RangeError(`ZSTD compression threads must be an integer from ${ZSTD_THREADS.min} to ${ZSTD_THREADS.max}, got ${threads}`);
  }
  return threads;
}

/**
 * The level and thread count to use, range-checked, from a bare level (as callers passed before options existed) or
 * from options; absent fields take the codec's defaults.
 */
export function resolveCompressionOptions(codec: CompressionCodec, options?: number | CompressionOptions): { level?: number; threads?: number } {
  const { level, threads } = typeof options === 'number' ? { level: options, threads: undefined } : (options ?? {});
  return { level: resolveCompressionLevel(codec, level ?? undefined), threads: resolveCompressionThreads(codec, threads) };
}

/** The sidecar form of a codec and its options. */
export function compressionSidecarInfo(codec: CompressionCodec, options?: number | CompressionOptions): CompressionSidecarInfo {
  const { level: resolved, threads: resolvedThreads } = resolveCompressionOptions(codec, options);
  return {
    codec,
    ...(resolved === undefined ? {} : { level: resolved }),
    extension: CODEC_EXTENSIONS[codec],
    ...(resolvedThreads === undefined ? {} : { threads: resolvedThreads, frameBytes: ZSTD_FRAME_BYTES }),
  };
}

/** Throws a clear error for a codec value that slipped past the type system (config, API input). */
export function assertKnownCodec(codec: unknown): asserts codec is CompressionCodec {
  if (!COMPRESSION_CODECS.includes(codec as CompressionCodec)) {
    throw new RangeError(
      `unknown compression codec "${String(codec)}"; expected one of ${COMPRESSION_CODECS.join(', ')}`,
    );
  }
}
