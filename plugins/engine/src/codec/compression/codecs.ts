// Codec table. Levels and the reasons for the defaults are documented in docs/formats/compression.md.

/** Compression codecs a backup can be written with. */
export const COMPRESSION_CODECS = ['NONE', 'GZIP', 'BROTLI', 'ZSTD'] as const;

/** One of {@link COMPRESSION_CODECS}. */
export type CompressionCodec = (typeof COMPRESSION_CODECS)[number];

/** Level range and default of one codec. */
export interface CodecLevels {
  min: number;
  max: number;
  /** Chosen for backup throughput: the level where a higher one costs far more time than it saves bytes. */
  default: number;
}

/** Level ranges; NONE has no level. */
export const CODEC_LEVELS: Readonly<Record<Exclude<CompressionCodec, 'NONE'>, CodecLevels>> = {
  GZIP: { min: 1, max: 9, default: 3 },
  BROTLI: { min: 0, max: 11, default: 3 },
  ZSTD: { min: 1, max: 19, default: 3 },
};

/** File extension appended to a backup written with the codec (empty for NONE). */
export const CODEC_EXTENSIONS: Readonly<Record<CompressionCodec, string>> = {
  NONE: '',
  GZIP: '.gz',
  BROTLI: '.br',
  ZSTD: '.zst',
};

/** The compression in the readable form written into the backup's `.meta.json` sidecar under `compression`. */
export interface CompressionSidecarInfo {
  codec: CompressionCodec;
  /** Undefined for NONE. */
  level?: number;
  extension: string;
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

/** The sidecar form of a codec and level. */
export function compressionSidecarInfo(codec: CompressionCodec, level?: number): CompressionSidecarInfo {
  const resolved = resolveCompressionLevel(codec, level);
  return {
    codec,
    ...(resolved === undefined ? {} : { level: resolved }),
    extension: CODEC_EXTENSIONS[codec],
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
