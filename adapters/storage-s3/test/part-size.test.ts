import { describe, expect, it } from 'vitest';
import { MAX_PARTS, PARTS_PER_GROWTH_STEP, maxBytes, partSizeFor } from '../src/internal/part-size.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const defaults = { partSize: 8 * MiB, maxPartSize: 64 * MiB };

/** How many parts an object of `size` bytes takes when each part is sized by partSizeFor. */
function partsNeeded(size: number, sizing: Parameters<typeof partSizeFor>[1]): { parts: number; largest: number } {
  let covered = 0;
  let parts = 0;
  let largest = 0;
  while (covered < size) {
    parts++;
    const part = partSizeFor(parts, sizing);
    largest = Math.max(largest, part);
    covered += part;
  }
  return { parts, largest };
}

describe('partSizeFor (pure part sizing)', () => {
  it('uses the configured part size for small and unknown sizes at the start', () => {
    expect(partSizeFor(1, defaults)).toBe(8 * MiB);
    expect(partSizeFor(1, { ...defaults, knownSize: 100 * MiB })).toBe(8 * MiB);
    expect(partSizeFor(PARTS_PER_GROWTH_STEP, defaults)).toBe(8 * MiB);
  });

  it('grows a known size part to the smallest whole MiB that fits 10,000 parts', () => {
    const knownSize = 200 * GiB;
    const size = partSizeFor(1, { ...defaults, knownSize });
    expect(size).toBe(Math.ceil(knownSize / MAX_PARTS / MiB) * MiB);
    expect(size % MiB).toBe(0);
    expect(partsNeeded(knownSize, { ...defaults, knownSize }).parts).toBeLessThanOrEqual(MAX_PARTS);
  });

  it('doubles every 1,000 parts for unknown sizes, never above the maximum', () => {
    expect(partSizeFor(PARTS_PER_GROWTH_STEP + 1, defaults)).toBe(16 * MiB);
    expect(partSizeFor(2 * PARTS_PER_GROWTH_STEP + 1, defaults)).toBe(32 * MiB);
    expect(partSizeFor(3 * PARTS_PER_GROWTH_STEP + 1, defaults)).toBe(64 * MiB);
    expect(partSizeFor(MAX_PARTS, defaults)).toBe(64 * MiB);
    expect(partSizeFor(MAX_PARTS, { partSize: 8 * MiB, maxPartSize: 8 * MiB })).toBe(8 * MiB);
  });

  it('never needs more than 10,000 parts nor exceeds the maximum, for any size up to maxBytes (known or streamed)', () => {
    const configs = [defaults, { partSize: 5 * MiB, maxPartSize: 5 * MiB }, { partSize: 5 * MiB, maxPartSize: 64 * MiB }, { partSize: 64 * MiB, maxPartSize: 64 * MiB }];
    for (const config of configs) {
      const limit = maxBytes(config);
      for (const fraction of [0.001, 0.1, 0.37, 0.5, 0.9, 0.999, 1]) {
        const size = Math.floor(limit * fraction);
        for (const sizing of [config, { ...config, knownSize: size }]) {
          const { parts, largest } = partsNeeded(size, sizing);
          expect(parts, `${size} bytes with ${JSON.stringify(sizing)}`).toBeLessThanOrEqual(MAX_PARTS);
          expect(largest).toBeLessThanOrEqual(config.maxPartSize);
          expect(largest).toBeGreaterThanOrEqual(5 * MiB);
        }
      }
      expect(partsNeeded(limit + 1, config).parts).toBeGreaterThan(MAX_PARTS);
    }
  });

  it('knows how far 10,000 parts reach', () => {
    // 1,000 x 8 + 1,000 x 16 + 1,000 x 32 + 7,000 x 64 MiB
    expect(maxBytes(defaults)).toBe((8_000 + 16_000 + 32_000 + 448_000) * MiB);
    expect(maxBytes({ partSize: 5 * MiB, maxPartSize: 5 * MiB })).toBe(50_000 * MiB);
    expect(maxBytes({ partSize: 64 * MiB, maxPartSize: 64 * MiB })).toBe(640_000 * MiB);
  });
});
