import { randomBytes } from 'node:crypto';
import { appendFile, chmod, link, mkdir, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  addDirectoryTree,
  ArchiveChainError,
  createArchiveWriter,
  readIndex,
  resolveSnapshot,
  restoreSnapshot,
  type ArchiveIndex,
  type IndexEntry,
} from '../src/index.js';
import { countingFileRangeReader, indexFileOf, makeTempDir, writeArchiveFile } from './support/archive-files.js';
import { describeTree, type TreeRecord } from './support/tree-compare.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

// Each step changes the source tree the way a week of use would; the chain must restore every step exactly.
const steps: ((root: string) => Promise<void>)[] = [
  async (root) => {
    await mkdir(join(root, 'docs', 'empty'), { recursive: true });
    await writeFile(join(root, 'docs', 'a.txt'), 'alpha\n');
    await writeFile(join(root, 'docs', 'b.txt'), 'bravo\n');
    await writeFile(join(root, 'big.bin'), randomBytes(512 * 1024));
    await writeFile(join(root, 'c.txt'), 'charlie\n');
    await link(join(root, 'c.txt'), join(root, 'c-link.txt'));
  },
  async (root) => {
    await appendFile(join(root, 'docs', 'b.txt'), 'bravo changed\n');
    await writeFile(join(root, 'new.txt'), 'added in run 1\n');
    await rename(join(root, 'docs', 'a.txt'), join(root, 'docs', 'a-renamed.txt'));
  },
  async (root) => {
    await rm(join(root, 'new.txt'));
    await rm(join(root, 'docs', 'empty'), { recursive: true });
    await writeFile(join(root, 'late.txt'), 'added in run 2\n');
  },
  async (root) => {
    // Same size, new mtime: still a change.
    await writeFile(join(root, 'c.txt'), 'CHARLIE\n');
    await utimes(join(root, 'c.txt'), 1_700_000_000, 1_700_000_123);
    await rename(join(root, 'big.bin'), join(root, 'docs', 'big-moved.bin'));
  },
  async (root) => {
    // Only the permissions change (size and mtime stay): the snapshot must still carry the new mode.
    await chmod(join(root, 'docs', 'b.txt'), 0o600);
  },
];

describe('incremental chains', () => {
  it('restores every snapshot of a chain with additions, changes, deletions and renames', async () => {
    const work = await makeTempDir('chain');
    cleanups.push(work.cleanup);
    const source = join(work.path, 'source');
    await mkdir(source);
    const indexes: ArchiveIndex[] = [];
    const trees: Map<string, TreeRecord>[] = [];
    const sizes: number[] = [];
    for (const [sequence, step] of steps.entries()) {
      await step(source);
      trees.push(await describeTree(source));
      const name = `run-${sequence}.hfa`;
      const previous = sequence === 0 ? undefined : resolveSnapshot(indexes);
      const writer = createArchiveWriter({
        archiveName: name,
        compression: 'zstd',
        chain: { id: 'chain-1', sequence, baseArchives: indexes.map((index) => index.archiveName as string) },
      });
      const result = await writeArchiveFile(writer, join(work.path, name), async (w) => {
        await addDirectoryTree(w, source, previous ? { previous } : {});
      });
      sizes.push(result.archiveSize);
      indexes.push(await readIndex({ sidecar: indexFileOf(result) }));
    }

    expect(indexes[1]?.renames).toEqual([{ from: 'docs/a.txt', to: 'docs/a-renamed.txt' }]);
    expect(indexes[2]?.deletions.sort()).toEqual(['docs/empty', 'new.txt']);
    expect(indexes[3]?.renames).toEqual([{ from: 'big.bin', to: 'docs/big-moved.bin' }]);
    // The unchanged 512 KiB file is referenced, not stored again: incremental archives stay small.
    const bigEntry = indexes[2]?.entries.find((entry) => entry.path === 'big.bin');
    expect(bigEntry?.archive).toBe('run-0.hfa');
    expect(sizes[0]).toBeGreaterThan(512 * 1024);
    for (const incremental of sizes.slice(1)) expect(incremental).toBeLessThan(64 * 1024);
    expect(indexes[3]?.entries.find((entry) => entry.path === 'c.txt')?.archive).toBeUndefined();

    for (const sequence of steps.keys()) {
      const snapshot = resolveSnapshot(indexes.slice(0, sequence + 1));
      const restored = join(work.path, `restored-${sequence}`);
      await restoreSnapshot(snapshot, (archive) => countingFileRangeReader(join(work.path, archive)).rangeReader, restored);
      expect(await describeTree(restored), `snapshot ${sequence}`).toEqual(trees[sequence]);
    }
    expect(resolveSnapshot(indexes).requiredArchives).toContain('run-0.hfa');
  });

  it('restores one file of a snapshot reading only that file from the archive holding it', async () => {
    const work = await makeTempDir('chain-one-file');
    cleanups.push(work.cleanup);
    const source = join(work.path, 'source');
    await mkdir(source);
    await steps[0]?.(source);
    const result = await writeArchiveFile(createArchiveWriter({ archiveName: 'full.hfa', chain: { id: 'c', sequence: 0, baseArchives: [] } }), join(work.path, 'full.hfa'), (w) =>
      addDirectoryTree(w, source).then(() => undefined),
    );
    const snapshot = resolveSnapshot([result.index]);
    const counter = countingFileRangeReader(join(work.path, 'full.hfa'));
    const restored = join(work.path, 'one');
    await restoreSnapshot(snapshot, () => counter.rangeReader, restored, { include: (path) => path === 'docs/b.txt' });
    expect(counter.requests).toHaveLength(1);
    expect(counter.served()).toBeLessThan(4096);
    expect((await stat(join(restored, 'docs', 'b.txt'))).size).toBe(6);
    // A hard link whose target is not selected comes back as a copy of the target.
    await restoreSnapshot(snapshot, () => counter.rangeReader, join(work.path, 'link'), { include: (path) => path === 'c-link.txt' });
    expect((await stat(join(work.path, 'link', 'c-link.txt'))).size).toBe(8);
  });

  it('refuses a chain with a missing middle archive or a reference to a member that is not there', async () => {
    const base = { format: 'holdfast-archive-index', version: 1, createdAt: '2026-01-01T00:00:00.000Z', deletions: [], renames: [] } satisfies Partial<ArchiveIndex>;
    const file: IndexEntry = { path: 'f', kind: 'file', mode: 0o644, uid: 0, gid: 0, mtime: '1', size: 1, offset: 1536, length: 1024, sha256: 'a'.repeat(64) };
    const full: ArchiveIndex = { ...base, archiveName: 'r0', chain: { id: 'x', sequence: 0, baseArchives: [] }, entries: [file] };
    const second: ArchiveIndex = { ...base, archiveName: 'r1', chain: { id: 'x', sequence: 1, baseArchives: ['r0'] }, entries: [{ ...file, archive: 'r0' }] };
    const third: ArchiveIndex = { ...base, archiveName: 'r2', chain: { id: 'x', sequence: 2, baseArchives: ['r0', 'r1'] }, entries: [{ ...file, archive: 'r0' }] };
    expect(resolveSnapshot([third, second, full]).entries[0]?.archive).toBe('r0');
    expect(() => resolveSnapshot([full, third])).toThrow(/missing sequence 1/);
    const stale: ArchiveIndex = { ...second, entries: [{ ...file, archive: 'r0', offset: 9999 }] };
    expect(() => resolveSnapshot([full, stale])).toThrow(ArchiveChainError);
    const silentDelete: ArchiveIndex = { ...second, entries: [] };
    expect(() => resolveSnapshot([full, silentDelete])).toThrow(/without a recorded deletion or rename/);
  });
});
