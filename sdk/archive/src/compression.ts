import { PassThrough, type Transform } from 'node:stream';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { ArchiveError } from './errors.js';
import type { Compression } from './format/index-schema.js';

// Node 20's zlib has no zstd; @cloudpss/zstd ships prebuilt N-API binaries. Loaded once and guarded so a platform
// without a prebuild loses zstd only, with a clear error, instead of failing to load the package.
type ZstdModule = typeof import('@cloudpss/zstd/napi');
const zstd: { module?: ZstdModule; loadError?: string } = await import('@cloudpss/zstd/napi').then(
  (module: ZstdModule) => ({ module }),
  (error: unknown) => ({ loadError: error instanceof Error ? error.message : String(error) }),
);

const gzip = promisify(zlib.gzip);

function zstdModule(): ZstdModule {
  if (zstd.module) return zstd.module;
  throw new ArchiveError('ARCHIVE_UNSUPPORTED', `zstd is not available on ${process.platform}-${process.arch}: ${zstd.loadError}`);
}

/** Compresses one part's bytes into one self-contained frame (a gzip member or a zstd frame). */
export async function compressPart(compression: Compression, data: Buffer, level?: number): Promise<Buffer> {
  switch (compression) {
    case 'none':
      return data;
    case 'gzip':
      return gzip(data, { level: level ?? 6 });
    case 'zstd':
      return asBuffer(zstdModule().compress(data, level ?? 3));
  }
}

/** Decompresses one complete zstd frame (a part as compressPart wrote it) in one call. */
export function decompressFrame(frame: Buffer): Buffer {
  return asBuffer(zstdModule().decompress(frame));
}

// A view, not Buffer.from(bytes), which would copy every part once more.
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * A Transform that decompresses the concatenated frames of a member's parts. Both decoders accept concatenated
 * frames as one stream, which is also why `cat part-* | zcat` restores a member by hand.
 */
export function createPartsDecompressor(compression: Compression): Transform {
  switch (compression) {
    case 'none':
      return new PassThrough();
    case 'gzip':
      return zlib.createGunzip();
    case 'zstd':
      return new (zstdModule().Decompressor)();
  }
}

/** File name suffix of a part, so a person with plain tools knows which decoder to use. */
export function partSuffix(compression: Compression): string {
  return compression === 'gzip' ? '.gz' : compression === 'zstd' ? '.zst' : '';
}
