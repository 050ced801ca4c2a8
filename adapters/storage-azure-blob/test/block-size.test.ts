import { describe, expect, it } from 'vitest';
import { isAdapterError } from '@holdfast/sdk';
import { blockSizeFor, MAX_BLOCKS } from '../src/internal/upload.js';

const MiB = 1024 * 1024;

describe('storage-azure-blob block sizing', () => {
  it('keeps the configured block size while 50,000 blocks suffice, or the size is unknown', () => {
    expect(blockSizeFor(8)).toBe(8 * MiB);
    expect(blockSizeFor(8, 8 * MiB * MAX_BLOCKS)).toBe(8 * MiB);
  });

  it('grows the block size in whole MiB so a known size never needs more than 50,000 blocks', () => {
    const oneTiB = 1024 * 1024 * MiB;
    const size = blockSizeFor(8, oneTiB);
    expect(size).toBe(21 * MiB);
    expect(Math.ceil(oneTiB / size)).toBeLessThanOrEqual(MAX_BLOCKS);
    expect(blockSizeFor(8, 8 * MiB * MAX_BLOCKS + 1)).toBe(9 * MiB);
  });

  it('refuses a size beyond the block blob limit with a CONFIG error', () => {
    let caught: unknown;
    try {
      blockSizeFor(8, 4001 * MiB * MAX_BLOCKS);
    } catch (error) {
      caught = error;
    }
    expect(isAdapterError(caught) && caught.code).toBe('CONFIG');
  });
});
