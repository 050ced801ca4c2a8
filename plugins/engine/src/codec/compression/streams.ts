import { PassThrough, type Transform } from 'node:stream';
import zlib from 'node:zlib';
import { assertKnownCodec, resolveCompressionOptions, ZSTD_FRAME_BYTES, type CompressionCodec, type CompressionOptions } from './codecs.js';
import { ParallelGzipCompressor, ParallelZstdCompressor } from './parallel-zstd.js';
import { compressionThreadsForThisMachine } from './pool-slots.js';
import { zstdAvailable, zstdDecoder } from './zstd-bindings.js';

/** True when the codec can be used in this process (ZSTD needs its native bindings to load). */
export function isCodecAvailable(codec: CompressionCodec): boolean {
  return codec !== 'ZSTD' || zstdAvailable();
}

// zlib's default output piece is 16 KiB: every piece then travels alone through encryption, hashing, the fan-out
// and each destination's write. 64 KiB pieces cut that per-piece work by four with no other effect (the bytes and
// the backpressure are the same; memory per stream grows by 48 KiB).
const ZLIB_CHUNK_BYTES = 64 * 1024;
const GUNZIP_CHUNK_BYTES = 256 * 1024;

// GZIP blocks compressed at once on libuv's pool (4 threads unless UV_THREADPOOL_SIZE says otherwise), which file
// reads and other zlib work share: one pool thread is left free for them.
const GZIP_THREADS = compressionThreadsForThisMachine();

/**
 * Creates a Transform that compresses with the codec. The level (a bare number, or `options.level`) defaults to the
 * codec's backup default and is range-checked; `options.threads` is how many ZSTD frames are compressed at once.
 * NONE is a pass-through. GZIP and ZSTD compress independent frames on libuv's thread pool (see
 * ParallelBlockCompressor), so the main thread never runs their compressors.
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
      zstdDecoder(); // the clear "not available on this platform" error, now rather than at the first frame
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
      return new (zstdDecoder().Decompressor)();
  }
}
