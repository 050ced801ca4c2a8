import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { directorySource, dumpToBuffer } from './helpers.js';
import { normalizeOwners, sha256, writeGoldenTree } from './golden-tree.js';
import { describeTree, removeAll, tempDir } from './tree.js';

// The tar of the same tree must stay the same byte for byte when the directory source's reading gets faster (issue 42,
// acceptance 3), and a tar written before such a change must restore unchanged. The fixtures were written by the code
// as it was before the small-file work of 2026-12-07 (commit named in docs/benchmarks.md), with
// `HOLDFAST_GOLDEN_WRITE=1 npx vitest run adapters/source-directory/test/archive-golden.test.ts`: never rewrite them
// to make this test pass, a difference here is a change of the archive format.
const fixtures = join(import.meta.dirname, 'fixtures');
const digestFile = join(fixtures, 'golden-archive.json');
const archiveFile = join(fixtures, 'golden-archive.tar.gz');
const uid = process.getuid?.() ?? 0;
const gid = process.getgid?.() ?? 0;
const signal = () => new AbortController().signal;

let work: string;
beforeEach(async () => {
  work = await tempDir('golden');
});
afterEach(() => removeAll(work));

describe('source-directory archive of a fixed tree', () => {
  it('is byte-identical to the archive the earlier code wrote (owners normalized)', async () => {
    const root = join(work, 'golden');
    await writeGoldenTree(root);
    const { archive, stats } = await dumpToBuffer(directorySource({ paths: [root] }));
    expect(stats.warnings).toEqual([]);
    const normalized = normalizeOwners(archive, uid, gid);
    if (process.env.HOLDFAST_GOLDEN_WRITE === '1') {
      await writeFile(archiveFile, gzipSync(normalized, { level: 9 }));
      await writeFile(digestFile, `${JSON.stringify({ sha256: sha256(normalized), bytes: normalized.length }, null, 2)}\n`);
    }
    const recorded = JSON.parse(await readFile(digestFile, 'utf8')) as { sha256: string; bytes: number };
    const earlier = gunzipSync(await readFile(archiveFile));
    // The first differing byte says which header or body moved, which a digest alone would not.
    const firstDifference = normalized.findIndex((byte, at) => byte !== earlier[at]);
    expect({ length: normalized.length, firstDifference }).toEqual({ length: recorded.bytes, firstDifference: -1 });
    expect(sha256(normalized)).toBe(recorded.sha256);
  });

  it('restores the archive the earlier code wrote to the same tree', async () => {
    const recorded = JSON.parse(await readFile(digestFile, 'utf8')) as { sha256: string };
    const earlier = gunzipSync(await readFile(archiveFile));
    expect(sha256(earlier)).toBe(recorded.sha256);
    const root = join(work, 'golden');
    await writeGoldenTree(root);
    const target = join(work, 'target');
    const result = await directorySource({ paths: ['/unused'] }).restore(Readable.from([earlier]), { target: { path: target }, signal: signal() });
    expect(result.warnings).toEqual([]);
    const expected = await describeTree(root);
    expect(Object.keys(expected).length).toBeGreaterThan(280);
    expect(await describeTree(join(target, '0-golden'))).toEqual(expected);
  });
});
