import { PassThrough, type Transform } from 'node:stream';
import { availableParallelism } from 'node:os';
import zlib from 'node:zlib';
import { assertKnownCodec, resolveCompressionOptions, ZSTD_FRAME_BYTES, type CompressionCodec, type CompressionOptions } from './codecs.js';
import { ParallelGzipCompressor, ParallelZstdCompressor } from './parallel-zstd.js';

// Node 20's zlib has no zstd. @cloudpss/zstd ships prebuilt N-API binaries inside its npm package (nothing is
// compiled or downloaded at install). Loaded once and guarded, so a platform without a prebuild loses ZSTD only,
// with a clear error, instead of failing to load the whole engine.
type ZstdModule = typeof import('@cloudpss/zstd/napi');
const zstd: { module?: ZstdModule; loadError?: string } = await import('@cloudpss/zstd/napi').then(
  (module: ZstdModule) => ({ module }),
  (error: unknown) => ({ loadError: error instanceof Error ? error.message : String(error) }),
);

/** True when the codec can be used in this process (ZSTD needs the native binding to load). */
export function isCodecAvailable(codec: CompressionCodec): boolean {
  return codec !== 'ZSTD' || zstd.module !== undefined;
}

function zstdModule(): ZstdModule {
  if (zstd.module) return zstd.module;
  throw new Error(`ZSTD compression is not available on this platform (${process.platform}-${process.arch}): ${zstd.loadError}`);
}

// zlib's default output piece is 16 KiB: every piece then travels alone through encryption, hashing, the fan-out
// and each destination's write. 64 KiB pieces cut that per-piece work by four with no other effect (the bytes and
// the backpressure are the same; memory per stream grows by 48 KiB).
const ZLIB_CHUNK_BYTES = 64 * 1024;
const GUNZIP_CHUNK_BYTES = 256 * 1024;

// GZIP blocks compressed at once on libuv's pool (4 threads unless UV_THREADPOOL_SIZE says otherwise), which file
// reads and other zlib work share: one pool thread is left free for them.
const GZIP_THREADS = Math.max(1, Math.min(availableParallelism(), (Number(process.env.UV_THREADPOOL_SIZE) || 4) - 1));

/**
 * Creates a Transform that compresses with the codec. The level (a bare number, or `options.level`) defaults to the
 * codec's backup default and is range-checked; `options.threads` is ZSTD's worker thread count. NONE is a
 * pass-through. ZSTD always compresses on worker threads (independent frames, see ParallelZstdCompressor), so the
 * main thread never runs the compressor.
 */
export function createCompressStream(codec: CompressionCodec, options?: number | CompressionOptions): Transform {
  const { level: resolved, threads: resolvedThreads } = resolveCompressionOptions(codec, options);
  switch (codec) {
    case 'NONE':
      return new PassThrough();
    case 'GZIP':
      return new ParallelGzipCompressor({ level: resolved as number, threads: GZIP_THREADS, frameBytes: ZSTD_FRAME_BYTES });
    case 'BROTLI':
      return zlib.createBrotliCompress({
        chunkSize: ZLIB_CHUNK_BYTES,
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: resolved as number,
          [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_GENERIC,
        },
      });
    case 'ZSTD':
      zstdModule();
      return new ParallelZstdCompressor({ level: resolved as number, threads: resolvedThreads as number, frameBytes: ZSTD_FRAME_BYTES });
  }
}

/** Creates a Transform that decompresses data written by {@link createCompressStream} with the same codec. */
export function createDecompressStream(codec: CompressionCodec): Transform {
  assertKnownCodec(codec);
  switch (codec) {
    case 'NONE':
      return new PassThrough();
    case 'GZIP':
      // Each output piece is a round trip from the thread pool to the main thread; a restore's output is several
      // times its input, so larger pieces here (as in ParallelGzipCompressor) cut those round trips by four.
      return zlib.createGunzip({ chunkSize: GUNZIP_CHUNK_BYTES });
    case 'BROTLI':
      return zlib.createBrotliDecompress({ chunkSize: ZLIB_CHUNK_BYTES });
    case 'ZSTD':
      return new (zstdModule().Decompressor)();
  }
}
