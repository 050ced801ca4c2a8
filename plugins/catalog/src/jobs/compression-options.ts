import { CODEC_LEVELS, ValidationError, ZSTD_THREADS, type CodecLevels } from '@holdfast/kernel';

// The ranges are the kernel's, which the engine checks again at run time: a bad job gets a 400 when it is saved
// rather than a failed run later.
const LEVELS: Readonly<Record<string, CodecLevels>> = CODEC_LEVELS;

/** The compression fields of a job after an update is applied to the stored row. */
export interface CompressionFields {
  compression: string;
  compressionLevel: number | null;
  compressionThreads: number | null;
}

/** Throws a 400 naming the field when the level is outside the codec's range or threads are set for another codec. */
export function checkCompressionOptions(fields: CompressionFields): void {
  const { compression, compressionLevel, compressionThreads } = fields;
  if (compressionLevel !== null) {
    const range = LEVELS[compression];
    if (!range) throw invalid('body.compressionLevel', `compression ${compression} takes no level`);
    if (compressionLevel < range.min || compressionLevel > range.max) {
      throw invalid('body.compressionLevel', `${compression} level must be from ${range.min} to ${range.max}, got ${compressionLevel}`);
    }
  }
  if (compressionThreads !== null) {
    if (compression !== 'ZSTD') throw invalid('body.compressionThreads', `threads apply to ZSTD compression only, not ${compression}`);
    if (compressionThreads < ZSTD_THREADS.min || compressionThreads > ZSTD_THREADS.max) {
      throw invalid('body.compressionThreads', `must be from ${ZSTD_THREADS.min} to ${ZSTD_THREADS.max}, got ${compressionThreads}`);
    }
  }
}

function invalid(path: string, message: string): ValidationError {
  return new ValidationError(`Invalid request: ${path}: ${message}`, [{ path, message }]);
}
