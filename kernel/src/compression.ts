// The compression part of a job, shared by the catalog (which refuses a bad job when it is saved) and the engine
// (which compresses and checks again at run time), so both read one table. Levels and the reasons for the defaults:
// docs/formats/compression.md.

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

/** ZSTD frames compressed at once (the engine runs them on threads): the range a job may ask for. */
export const ZSTD_THREADS = { min: 1, max: 16 } as const;
