import { chmod, mkdir, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { directorySource, dumpToBuffer } from './helpers.js';
import { normalizeOwners, sha256 } from './golden-tree.js';
import { removeAll, tempDir } from './tree.js';

// Large files leave in body-sized chunks since 2026-12-07 (tar-output.ts BODY_CHUNK_BYTES); the golden tree's largest
// file is 300,000 bytes, so this tree adds sizes around the 128 KiB and 256 KiB chunk edges and a few MiB. The digest
// was taken with the code before that change (commit b645472): never update it to make this test pass.
const RECORDED = { sha256: '1db5885c3236f6a6d2578a8f9de08a2b12326ac2c7433e877c61352c13ea7cff', bytes: 5_303_296 };
const SIZES = [65_537, 131_071, 131_072, 131_073, 262_143, 262_144, 262_657, 1_048_576 + 513, 3_000_001];
const BASE_TIME = 1_700_000_000;

/** Deterministic bytes: a counter mixed with the file's index (no fixture needed, the same on every machine). */
function contentOf(size: number, index: number): Buffer {
  const content = Buffer.allocUnsafe(size);
  let state = (index + 1) * 2654435761;
  for (let at = 0; at < size; at++) {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    content[at] = state >>> 24;
  }
  return content;
}

let work: string;
beforeEach(async () => {
  work = await tempDir('large-golden');
});
afterEach(() => removeAll(work));

describe('source-directory archive of large files', () => {
  it('is byte-identical to the archive the code before body-sized chunks wrote (owners normalized)', async () => {
    const root = join(work, 'large');
    await mkdir(root);
    for (const [index, size] of SIZES.entries()) {
      const path = join(root, `file-${index}-${size}.bin`);
      await writeFile(path, contentOf(size, index));
      await chmod(path, 0o644);
      await utimes(path, BASE_TIME + index, BASE_TIME + index);
    }
    await chmod(root, 0o755);
    await utimes(root, BASE_TIME, BASE_TIME);
    const { archive, stats } = await dumpToBuffer(directorySource({ paths: [root] }));
    expect(stats.warnings).toEqual([]);
    const normalized = normalizeOwners(archive, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
    if (process.env.HOLDFAST_GOLDEN_PRINT === '1') console.log(JSON.stringify({ sha256: sha256(normalized), bytes: normalized.length }));
    expect({ sha256: sha256(normalized), bytes: normalized.length }).toEqual(RECORDED);
    // Every body is in the archive as written (a check that does not depend on the recorded digest).
    for (const [index, size] of SIZES.entries()) expect(normalized.includes(contentOf(size, index)), `file ${index}`).toBe(true);
  }, 60_000);
});
