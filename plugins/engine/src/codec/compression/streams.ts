import { PassThrough, type Transform } from 'node:stream';
import zlib from 'node:zlib';
import { assertKnownCodec, resolveCompressionLevel, type CompressionCodec } from './codecs.js';

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

/**
 * Creates a Transform that compresses with the codec. `level` defaults to the codec's backup default and is
 * range-checked; NONE is a pass-through.
 */
export function createCompressStream(codec: CompressionCodec, level?: number): Transform {
  const resolved = resolveCompressionLevel(codec, level);
  switch (codec) {
    case 'NONE':
      return new PassThrough();
    case 'GZIP':
      return zlib.createGzip({ level: resolved });
    case 'BROTLI':
      return zlib.createBrotliCompress({
        params: {
          [zlib.constants.BROTLI_PARAM_QUALITY]: resolved as number,
          [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_GENERIC,
        },
      });
    case 'ZSTD':
      return new (zstdModule().Compressor)(resolved);
  }
}

/** Creates a Transform that decompresses data written by {@link createCompressStream} with the same codec. */
export function createDecompressStream(codec: CompressionCodec): Transform {
  assertKnownCodec(codec);
  switch (codec) {
    case 'NONE':
      return new PassThrough();
    case 'GZIP':
      return zlib.createGunzip();
    case 'BROTLI':
      return zlib.createBrotliDecompress();
    case 'ZSTD':
      return new (zstdModule().Decompressor)();
  }
}
