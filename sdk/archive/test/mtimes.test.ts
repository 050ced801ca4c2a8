// Restored modification times are the stored ones as closely as the runtime's utimes sets them: cut to the
// microsecond on Node 20 (libuv truncates), within a double's precision where libuv keeps nanoseconds (Node 24). For
// every time: whole microseconds that a double would land just below, nanosecond times, times before 1970 (which
// Node's utimes would silently replace by "now" if given as a number), for files, folders and symlinks, through
// extractAll and restoreSnapshot.
import { execFileSync } from 'node:child_process';
import { createReadStream } from 'node:fs';
import { lstat, mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addDirectoryTree, createArchiveWriter, extractAll, readIndex, resolveSnapshot, restoreSnapshot } from '../src/index.js';
import { utimesKeepsNanoseconds } from '../src/format/times.js';
import { countingFileRangeReader, indexFileOf, makeTempDir, writeArchiveFile } from './support/archive-files.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Seeded times in nanoseconds: whole microseconds from 1950 to 2100, a few with nanoseconds, and edge cases. */
function sampleTimes(count: number): bigint[] {
  let state = 0x2f6e2b1n;
  const next = () => (state = (state * 6364136223846793005n + 1442695040888963407n) & 0xffffffffffffffffn);
  const times: bigint[] = [0n, 1_000n, -1_000n, -1n, 1_700_000_000_123_456_000n, -631_152_000_000_001_500n, 4_102_444_799_999_999_000n];
  for (let index = 0; times.length < count; index += 1) {
    const span = 4_733_510_400_000_000n; // 1950..2100 in microseconds
    const micro = (next() % span) - 631_152_000_000_000n;
    times.push(micro * 1000n + (index % 10 === 0 ? next() % 1000n : 0n));
  }
  return times;
}

function touchArgument(ns: bigint): string {
  const sign = ns < 0n ? '-' : '';
  const magnitude = ns < 0n ? -ns : ns;
  return `@${sign}${magnitude / 1_000_000_000n}.${(magnitude % 1_000_000_000n).toString().padStart(9, '0')}`;
}

/** The time utimes can give back on Node 20: the stored one floored to the microsecond (the kernel keeps nanoseconds >= 0). */
function toMicrosecond(ns: bigint): bigint {
  const micro = ns / 1000n - (ns < 0n && ns % 1000n !== 0n ? 1n : 0n);
  return micro * 1000n;
}

const NANOSECOND_RUNTIME = utimesKeepsNanoseconds();

/** What the restore must give back for a stored time: exact on Node 20, the time itself on nanosecond runtimes. */
function restorable(ns: bigint): bigint {
  return NANOSECOND_RUNTIME ? ns : toMicrosecond(ns);
}

/**
 * How far the restored time may be from {@link restorable}: nothing on Node 20; on nanosecond runtimes the time
 * travels as a double of seconds, so one unit in its last place (238 ns for 2004-2038, 477 ns up to 2106).
 */
function allowedError(ns: bigint): bigint {
  if (!NANOSECOND_RUNTIME || ns === 0n) return 0n;
  const seconds = Math.abs(Number(ns) / 1e9);
  return BigInt(Math.ceil(2 ** (Math.floor(Math.log2(seconds)) - 52) * 1e9)) + 1n;
}

describe('restored modification times', () => {
  it('are the stored times (cut to the microsecond on Node 20), before 1970 included, for files, folders and symlinks', async () => {
    const temp = await makeTempDir('mtimes');
    cleanups.push(temp.cleanup);
    const source = join(temp.path, 'source');
    await mkdir(join(source, 'folder'), { recursive: true });
    const times = sampleTimes(240);
    const expected = new Map<string, bigint>();
    for (const [index, ns] of times.entries()) {
      const path = index % 40 === 1 ? `folder/link-${index}` : `file-${index}`;
      if (path.startsWith('folder/link')) await symlink('../file-0', join(source, path));
      else await writeFile(join(source, path), `content ${index}`);
      // touch sets nanoseconds through utimensat; -h sets the link itself.
      execFileSync('touch', ['-h', '-m', '-d', touchArgument(ns), join(source, path)]);
      expected.set(path, restorable((await lstat(join(source, path), { bigint: true })).mtimeNs));
    }
    execFileSync('touch', ['-m', '-d', touchArgument(-86_400_123_456_789n), join(source, 'folder')]);
    expected.set('folder', restorable(-86_400_123_456_789n));

    const archive = join(temp.path, 'a.hfa');
    const result = await writeArchiveFile(createArchiveWriter({ compression: 'none', archiveName: 'a.hfa' }), archive, (writer) => addDirectoryTree(writer, source).then(() => undefined));
    const extracted = join(temp.path, 'extracted');
    await mkdir(extracted);
    await extractAll(createReadStream(archive), extracted);
    const snapshot = resolveSnapshot([await readIndex({ sidecar: indexFileOf(result) })]);
    const restored = join(temp.path, 'restored');
    await mkdir(restored);
    await restoreSnapshot(snapshot, () => countingFileRangeReader(archive).rangeReader, restored);

    for (const root of [extracted, restored]) {
      const wrong: string[] = [];
      for (const [path, want] of expected) {
        const got = (await lstat(join(root, path), { bigint: true })).mtimeNs;
        const off = got > want ? got - want : want - got;
        if (off > allowedError(want)) wrong.push(`${path}: ${got} != ${want}`);
      }
      expect(wrong, `${root}: ${wrong.slice(0, 5).join('; ')}`).toEqual([]);
      expect((await readdir(root)).length).toBe((await readdir(source)).length);
    }
  });
});
