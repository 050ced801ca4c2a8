import { randomBytes } from 'node:crypto';
import { mkdir, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import tar from 'tar-stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { TarOutput } from '../src/internal/tar-output.js';
import type { ArchiveEntry } from '../src/internal/walk.js';
import { WarningList } from '../src/internal/warnings.js';
import { directorySource, dumpToBuffer } from './helpers.js';
import { tempDir } from './tree.js';

// Small files (up to 64 KiB) are read with synchronous calls when their turn comes, straight into the tar's chunk;
// larger ones are opened ahead through fs/promises. These tests check what that must keep: every byte and header in
// order, the descriptor limit, files that change between the walk and the read, and the calls that made trees of small
// files fast (no stat of a small file after its open, no stat of the walk through libuv's pool).
const descriptors = vi.hoisted(() => ({ open: 0, peak: 0, asyncLstats: 0, syncReads: 0, fstats: 0, shrinkTo: new Map<string, number>(), failStat: new Set<string>() }));
const opened = (path: string) => {
  descriptors.open += 1;
  descriptors.peak = Math.max(descriptors.peak, descriptors.open);
  return path;
};
/** Dirties the buffer (as a reused chunk would be), then reads only what is left before a "shrink" of the file. */
const allowedRead = (path: string | undefined, buffer: Buffer, offset: number, length: number, position: number) => {
  const limit = (path === undefined ? undefined : descriptors.shrinkTo.get(path)) ?? Infinity;
  buffer.fill(0xaa, offset, offset + length);
  return Math.max(0, Math.min(length, limit - position));
};
vi.mock('node:fs', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs')>();
  const pathOf = new Map<number, string>();
  return {
    ...actual,
    openSync: (...args: Parameters<typeof actual.openSync>) => {
      const fd = actual.openSync(...args);
      pathOf.set(fd, opened(String(args[0])));
      return fd;
    },
    closeSync: (fd: number) => {
      descriptors.open -= 1;
      pathOf.delete(fd);
      actual.closeSync(fd);
    },
    fstatSync: (fd: number, ...rest: unknown[]) => {
      descriptors.fstats += 1;
      const path = pathOf.get(fd);
      if (path !== undefined && descriptors.failStat.has(path)) throw Object.assign(new Error(`EIO: i/o error, fstat '${path}'`), { code: 'EIO' });
      return (actual.fstatSync as (...args: unknown[]) => unknown)(fd, ...rest);
    },
    readSync: (fd: number, buffer: Buffer, offset: number, length: number, position: number) => {
      descriptors.syncReads += 1;
      const allowed = allowedRead(pathOf.get(fd), buffer, offset, length, position);
      return allowed === 0 ? 0 : actual.readSync(fd, buffer, offset, allowed, position);
    },
  };
});
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...actual,
    lstat: async (...args: Parameters<typeof actual.lstat>) => {
      descriptors.asyncLstats += 1;
      return actual.lstat(...args);
    },
    open: async (...args: Parameters<typeof actual.open>) => {
      const handle = await actual.open(...args);
      const path = opened(String(args[0]));
      const close = handle.close.bind(handle);
      const statOf = handle.stat.bind(handle);
      const read = handle.read.bind(handle) as (buffer: Buffer, offset: number, length: number, position: number) => Promise<{ bytesRead: number; buffer: Buffer }>;
      return Object.assign(handle, {
        close: async () => {
          descriptors.open -= 1;
          return close();
        },
        stat: async (...options: Parameters<typeof statOf>) => {
          descriptors.fstats += 1;
          if (descriptors.failStat.has(path)) throw Object.assign(new Error(`EIO: i/o error, fstat '${path}'`), { code: 'EIO' });
          return statOf(...options);
        },
        read: async (buffer: Buffer, offset: number, length: number, position: number) => {
          const allowed = allowedRead(path, buffer, offset, length, position);
          if (allowed === 0) return { bytesRead: 0, buffer };
          return read(buffer, offset, allowed, position);
        },
      });
    },
  };
});

const { writeArchive } = await import('../src/internal/pack.js');

/** Every member of a tar: name, type, mode, size and content. */
async function unpack(archive: Buffer): Promise<Map<string, { type: string; mode: number; size: number; content: Buffer }>> {
  const members = new Map<string, { type: string; mode: number; size: number; content: Buffer }>();
  const extract = tar.extract();
  const feeding = (async () => extract.end(archive))();
  for await (const entry of extract) {
    const pieces: Buffer[] = [];
    for await (const piece of entry) pieces.push(piece as Buffer);
    members.set(entry.header.name, { type: String(entry.header.type), mode: entry.header.mode ?? 0, size: entry.header.size ?? 0, content: Buffer.concat(pieces) });
  }
  await feeding;
  return members;
}

/** Packs hand-made entries (stats taken now, as the walk would) and returns the tar with the warnings. */
async function packEntries(entries: ArchiveEntry[], maxOpenFiles: number, beforeWrite?: () => Promise<void>): Promise<{ archive: Buffer; warnings: string[] }> {
  const warnings = new WarningList();
  const out = new TarOutput(new AbortController().signal);
  async function* walked() {
    yield* entries;
  }
  await beforeWrite?.();
  const chunks: Buffer[] = [];
  out.stream.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise((resolve) => out.stream.on('end', resolve));
  await writeArchive(out, walked(), { maxOpenFiles, followSymlinks: false, warnings, signal: new AbortController().signal });
  out.finish();
  await ended;
  return { archive: Buffer.concat(chunks), warnings: warnings.list() };
}

let dir: string;
beforeEach(async () => {
  dir = await tempDir('small-files');
  descriptors.open = 0;
  descriptors.peak = 0;
  descriptors.asyncLstats = 0;
  descriptors.syncReads = 0;
  descriptors.fstats = 0;
  descriptors.shrinkTo.clear();
  descriptors.failStat.clear();
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('source-directory: trees of small files', () => {
  it('stores 300 small files of every size around the limit byte for byte, in order, opening large ones ahead but at most maxConcurrentFiles', async () => {
    const root = join(dir, 'tree');
    const expected = new Map<string, Buffer>();
    const sizes = [0, 1, 511, 512, 513, 4096, 65_535, 65_536, 65_537, 200_000];
    for (let index = 0; index < 300; index++) {
      const sub = join(root, `d${index % 7}`);
      await mkdir(sub, { recursive: true });
      const content = randomBytes(sizes[index % sizes.length]!);
      const name = `f${String(index).padStart(3, '0')}.bin`;
      await writeFile(join(sub, name), content, { mode: index % 2 === 0 ? 0o640 : 0o600 });
      expected.set(`0-tree/d${index % 7}/${name}`, content);
    }
    const { archive, stats } = await dumpToBuffer(directorySource({ paths: [root], maxConcurrentFiles: 3 }));
    expect(stats.warnings).toEqual([]);
    const members = await unpack(archive);
    const files = [...members].filter(([, member]) => member.type === 'file');
    expect(files).toHaveLength(300);
    for (const [name, member] of files) {
      expect(member.content.equals(expected.get(name)!), name).toBe(true);
      expect(member.size).toBe(expected.get(name)!.length);
      expect(member.mode, name).toBe((await stat(join(dir, name.replace(/^0-tree/, 'tree')))).mode & 0o7777);
    }
    // Archive order is the walk's: folders and names sorted.
    const names = [...members.keys()];
    expect(names).toEqual([...names].sort());
    // Large files are opened ahead, within the descriptor limit (small files are read one at a time, synchronously).
    expect(descriptors.peak).toBeGreaterThanOrEqual(2);
    expect(descriptors.peak).toBeLessThanOrEqual(3);
    // Each small file is one synchronous read of its walked size plus a byte (the walk: no stat through the pool), and
    // one that still has the walk's size is not stated again after its open; only the large ones are, as they are
    // streamed. Before, each was four round trips to libuv's pool and the tree took 7-16 times as long as `tar | zstd`.
    const largeFiles = [...expected.values()].filter((content) => content.length > 65_536).length;
    expect(largeFiles).toBe(60);
    expect(descriptors.syncReads).toBe(300 - largeFiles);
    expect(descriptors.asyncLstats).toBe(0);
    expect(descriptors.fstats).toBe(largeFiles);
    expect(descriptors.open).toBe(0);
  });

  it('takes the facts of a small file that changed size since the walk from the open file', async () => {
    const path = join(dir, 'notes.txt');
    await writeFile(path, 'short', { mode: 0o600 });
    const walked = await stat(path);
    const { archive, warnings } = await packEntries([{ kind: 'file', member: 'notes.txt', absolute: path, stats: walked }], 2, async () => {
      await writeFile(path, 'a longer text than the walk saw');
    });
    const stored = (await unpack(archive)).get('notes.txt')!;
    expect(stored.content.toString()).toBe('a longer text than the walk saw');
    expect(stored.size).toBe(31);
    expect(warnings).toEqual([]);
    expect(descriptors.fstats).toBe(1);
  });

  it('pads a small file that shrinks while it is read with zeros, and warns', async () => {
    const path = join(dir, 'log.txt');
    const original = Buffer.alloc(40_000, 0x41);
    await writeFile(path, original);
    descriptors.shrinkTo.set(path, 10_000);
    const { archive, warnings } = await packEntries([{ kind: 'file', member: 'log.txt', absolute: path, stats: await stat(path) }], 2);
    const stored = (await unpack(archive)).get('log.txt')!;
    expect(stored.size).toBe(40_000);
    expect(stored.content.subarray(0, 10_000).equals(original.subarray(0, 10_000))).toBe(true);
    expect(stored.content.subarray(10_000).every((byte) => byte === 0)).toBe(true);
    expect(warnings.join('\n')).toContain(`${path}: it shrank while it was read; the rest is zero-filled`);
  });

  it('streams a file that grew past the small size after the walk, and skips one that vanished, with a warning', async () => {
    const grown = join(dir, 'grown.bin');
    const gone = join(dir, 'gone.bin');
    const kept = join(dir, 'kept.bin');
    await writeFile(grown, 'tiny');
    await writeFile(gone, 'soon deleted');
    await writeFile(kept, 'stays');
    const entries: ArchiveEntry[] = [];
    for (const path of [gone, grown, kept]) entries.push({ kind: 'file', member: path.slice(dir.length + 1), absolute: path, stats: await stat(path) });
    const large = randomBytes(300_000);
    const { archive, warnings } = await packEntries(entries, 2, async () => {
      await unlink(gone);
      await writeFile(grown, large);
    });
    const members = await unpack(archive);
    expect([...members.keys()]).toEqual(['grown.bin', 'kept.bin']);
    expect(members.get('grown.bin')!.content.equals(large)).toBe(true);
    expect(members.get('kept.bin')!.content.toString()).toBe('stays');
    expect(warnings).toEqual([`${gone}: skipped, it vanished while the backup ran`]);
    expect(descriptors.open).toBe(0);
  });

  it('fails the dump, closing everything, when a small file that changed size since the walk cannot be stated', async () => {
    const root = join(dir, 'tree');
    await mkdir(root);
    for (let index = 0; index < 20; index++) await writeFile(join(root, `f${String(index).padStart(2, '0')}.txt`), `file ${index}`);
    // The read finds it shorter than the walk saw (shrinkTo, no race with the walk): it is stated after its open,
    // and that fails.
    descriptors.shrinkTo.set(join(root, 'f07.txt'), 3);
    descriptors.failStat.add(join(root, 'f07.txt'));
    await expect(dumpToBuffer(directorySource({ paths: [root] }))).rejects.toThrow(/EIO: i\/o error, fstat/);
    // The file whose stat failed was closed, and so were the large files opened ahead (none here).
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(descriptors.open).toBe(0);
  });
});
