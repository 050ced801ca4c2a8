const MiB = 1024 * 1024;

/** S3 allows at most 10,000 parts per multipart upload. */
export const MAX_PARTS = 10_000;
/** Unknown sizes: the part size doubles after every this many parts, so 10,000 parts cover far more than a start size would. */
export const PARTS_PER_GROWTH_STEP = 1_000;

/** Inputs of {@link partSizeFor}, all sizes in bytes. */
export interface PartSizing {
  /** The configured (starting) part size. */
  partSize: number;
  /** The configured maximum part size; never exceeded. */
  maxPartSize: number;
  /** The caller's size hint (`PutOptions.size`), when known. */
  knownSize?: number;
}

/**
 * The size of part `partNumber` (1-based). With a known size every part gets the same size: the configured one, or
 * the smallest whole MiB that fits the object into 10,000 parts. Without one (or when the stream outgrows the hint),
 * the size doubles every 1,000 parts up to `maxPartSize`. Pure; `maxBytes` below says how far that reaches.
 */
export function partSizeFor(partNumber: number, sizing: PartSizing): number {
  const fitting = sizing.knownSize === undefined ? 0 : Math.ceil(sizing.knownSize / MAX_PARTS / MiB) * MiB;
  const steps = Math.floor((partNumber - 1) / PARTS_PER_GROWTH_STEP);
  const grown = sizing.partSize * 2 ** Math.min(steps, 20);
  return Math.min(sizing.maxPartSize, Math.max(sizing.partSize, fitting, grown));
}

/** The largest object that fits into 10,000 parts sized by {@link partSizeFor}. */
export function maxBytes(sizing: PartSizing): number {
  let total = 0;
  for (let step = 0; step * PARTS_PER_GROWTH_STEP < MAX_PARTS; step++) {
    total += PARTS_PER_GROWTH_STEP * partSizeFor(step * PARTS_PER_GROWTH_STEP + 1, sizing);
  }
  return total;
}
