// The recovery kit's `extract` command against archives made by the real @holdfast/archive writer, encrypted with the
// engine's own HFENC stream. The kit runs as a child process from a folder outside the repository, so it can only
// use what ships in the kit: proof that it restores without Holdfast.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { appendFile, chmod, copyFile, link, lstat, lutimes, mkdir, readFile, readdir, readlink, rename, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { addDirectoryTree, readIndex, resolveSnapshot, type ArchiveIndex, type ArchiveWriter } from '@holdfast/archive';
import { useRecoveryKit, writeKitArchive, type KitArchiveTarget } from './recovery-kit-support.js';

const key = randomBytes(32);
const kit = useRecoveryKit(key);
const { extract, tempDir } = kit;
const withKey = kit.keyArgs;
const writeArchive = (target: KitArchiveTarget, fill: (writer: ArchiveWriter) => Promise<unknown>): Promise<ArchiveIndex> => writeKitArchive(key, target, fill);

interface PathRecord {
  type: 'file' | 'directory' | 'symlink';
  mode: number;
  uid: number;
  gid: number;
  size?: number;
  sha256?: string;
  target?: string;
  /** Every path of the tree sharing this file's inode, so hard links compare across trees. */
  sameInode?: string[];
}

interface TreeDescription {
  records: Record<string, PathRecord>;
  mtimesNs: Record<string, bigint>;
}

/** Describes a tree by path (type, mode, owner, content, link target, hard-link group) and its mtimes. */
async function describeTree(root: string): Promise<TreeDescription> {
  const records: Record<string, PathRecord> = {};
  const mtimesNs: Record<string, bigint> = {};
  const pathsOfInode = new Map<bigint, string[]>();
  const walk = async (dir: string, relativeDir: string): Promise<void> => {
    for (const name of (await readdir(dir)).sort()) {
      const path = relativeDir ? `${relativeDir}/${name}` : name;
      if (path === '.holdfast') continue;
      const absolute = join(dir, name);
      const stats = await lstat(absolute, { bigint: true });
      const common = { mode: Number(stats.mode & 0o7777n), uid: Number(stats.uid), gid: Number(stats.gid) };
      mtimesNs[path] = stats.mtimeNs;
      if (stats.isDirectory()) {
        records[path] = { type: 'directory', ...common };
        await walk(absolute, path);
      } else if (stats.isSymbolicLink()) {
        records[path] = { type: 'symlink', ...common, mode: 0, target: await readlink(absolute) };
      } else {
        pathsOfInode.set(stats.ino, [...(pathsOfInode.get(stats.ino) ?? []), path]);
        records[path] = { type: 'file', ...common, size: Number(stats.size), sha256: await sha256Of(absolute) };
      }
    }
  };
  await walk(root, '');
  for (const paths of pathsOfInode.values()) {
    if (paths.length > 1) for (const path of paths) records[path] = { ...records[path]!, sameInode: paths };
  }
  return { records, mtimesNs };
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Same records, and mtimes within the microsecond utimes keeps of the stored nanoseconds. */
function expectSameTree(actual: TreeDescription, expected: TreeDescription): void {
  expect(actual.records).toEqual(expected.records);
  const drifted = Object.keys(expected.mtimesNs).filter((path) => {
    const difference = (actual.mtimesNs[path] ?? 0n) - expected.mtimesNs[path]!;
    return difference > 1_000n || difference < -1_000n;
  });
  expect(drifted.map((path) => [path, actual.mtimesNs[path], expected.mtimesNs[path]])).toEqual([]);
}

/** Mostly compressible content with random stretches, large enough for several parts and HFENC records. */
function mixedContent(kib: number): Buffer {
  const parts: Buffer[] = [];
  for (let i = 0; i < kib / 8; i++) parts.push(Buffer.from(`line ${i} `.repeat(512)).subarray(0, 4096), randomBytes(4096));
  return Buffer.concat(parts);
}

const UNICODE_PATH = 'ünïcødé/日本語 ファイル 😀.txt';

/** The first state of the source tree: every kind of entry the kit restores. */
async function buildSourceTree(root: string): Promise<void> {
  await mkdir(join(root, 'docs', 'empty'), { recursive: true });
  await mkdir(join(root, 'bin'));
  await mkdir(join(root, 'ünïcødé'));
  await writeFile(join(root, 'docs', 'readme.txt'), 'read me\n');
  await writeFile(join(root, 'docs', 'big.bin'), mixedContent(320));
  await writeFile(join(root, 'bin', 'tool.sh'), '#!/bin/sh\necho tool\n', { mode: 0o755 });
  await writeFile(join(root, 'secret.txt'), 'only for me\n', { mode: 0o600 });
  await writeFile(join(root, UNICODE_PATH), 'こんにちは\n');
  await link(join(root, 'docs', 'readme.txt'), join(root, 'hard.txt'));
  await symlink('docs/readme.txt', join(root, 'link-to-readme'));
  await symlink('outside/nowhere', join(root, 'dangling'));
  // Fractional seconds, an old date and odd directory modes, applied after the contents (which touch mtimes).
  await utimes(join(root, 'secret.txt'), 1_000_000_000.25, 1_000_000_000.25);
  await lutimes(join(root, 'link-to-readme'), 1_600_000_000.5, 1_600_000_000.5);
  await chmod(join(root, 'docs'), 0o750);
  await chmod(join(root, 'docs', 'empty'), 0o700);
}

describe('recovery kit: extract seekable archives', () => {
  it('restores a plain gzip archive (index from its sidecar) with a database dump, no key needed', async () => {
    const work = await tempDir();
    const source = join(work, 'source');
    await mkdir(source);
    await buildSourceTree(source);
    const dump = mixedContent(96);
    const target: KitArchiveTarget = {
      file: join(work, 'files.hfa'),
      options: { archiveName: 'files.hfa', compression: 'gzip', chunkSize: 64 * 1024 },
      isEncrypted: false,
      hasIndexSidecar: true,
    };
    const index = await writeArchive(target, async (writer) => {
      await addDirectoryTree(writer, source);
      await writer.addDatabaseDump('shop eu', Readable.from([dump]));
    });
    expect(index.entries.find((entry) => entry.path === 'docs/big.bin')?.compression).toBe('gzip');
    // The sidecar is the index file itself, as the library reads it.
    expect((await readIndex({ sidecar: await readFile(`${target.file}.index.json`) })).entries).toEqual(index.entries);

    const result = await extract(work, ['files.hfa', 'restored']);
    expect(result.stderr).toContain('files.hfa: index read from');
    expect(result.stderr).toContain('files.hfa.index.json');
    expect(result.code).toBe(0);
    expectSameTree(await describeTree(join(work, 'restored')), await describeTree(source));
    expect((await readFile(join(work, 'restored', '.holdfast', 'databases', 'shop%20eu'))).equals(dump)).toBe(true);
    expect(result.stderr).toContain('database "shop eu": .holdfast/databases/shop%20eu');

    // Without encryption nothing authenticates the bytes: the content check against the index catches the change.
    const big = index.entries.find((entry) => entry.path === 'docs/big.bin')!;
    const bytes = await readFile(target.file);
    bytes[big.offset + 2048] = bytes[big.offset + 2048]! ^ 0x01;
    await writeFile(target.file, bytes);
    const flipped = await extract(work, ['files.hfa', 'restored-again']);
    expect(flipped.code).toBe(4);
    expect(flipped.stderr).toContain('"docs/big.bin"');
    expect(existsSync(join(work, 'restored-again'))).toBe(false);
  });

  it('restores an encrypted zstd archive without a sidecar, reading the index from the encrypted tail', async () => {
    const work = await tempDir();
    const source = join(work, 'source');
    await mkdir(source);
    await buildSourceTree(source);
    await writeArchive(
      {
        file: join(work, 'files.hfa.enc'),
        options: { archiveName: 'files.hfa.enc', compression: 'zstd', chunkSize: 64 * 1024 },
        isEncrypted: true,
        encryptionChunkSize: 4_099,
        hasIndexSidecar: false,
      },
      (writer) => addDirectoryTree(writer, source),
    );
    const result = await extract(work, [...withKey(), 'files.hfa.enc', 'restored']);
    expect(result.stderr).toContain('index read from the tail of files.hfa.enc');
    expect(result.code).toBe(0);
    expectSameTree(await describeTree(join(work, 'restored')), await describeTree(source));
  });

  it('refuses paths that leave the output folder or pass through a symlink, naming them', async () => {
    const work = await tempDir();
    const planted = join(work, 'planted.hfa');
    // The writer accepts a symlink and then a file "inside" it; the kit must not write through the link.
    await writeArchive({ file: planted, options: { archiveName: 'planted.hfa' }, isEncrypted: false, hasIndexSidecar: false }, async (writer) => {
      await writer.addSymlink({ path: 'a' }, join(work, 'elsewhere'));
      await writer.addFile({ path: 'a/b.txt', size: 4 }, Readable.from([Buffer.from('evil')]));
    });
    const throughLink = await extract(work, ['planted.hfa', 'out-planted']);
    // Issue 41: the refused members are named and the run ends with exit 7 (restored, but not everything).
    expect(throughLink.code).toBe(7);
    expect(throughLink.stderr).toContain('a/b.txt: refused, it lies below "a", a symlink of this archive');
    expect(throughLink.stderr).toContain(`a: symlink refused, its target "${join(work, 'elsewhere')}" is absolute, outside the output folder`);
    expect(existsSync(join(work, 'elsewhere'))).toBe(false);
    expect(await readdir(join(work, 'out-planted'))).toEqual([]);

    // An index naming "../evil.txt" or "/x/evil.txt" (checksums recomputed, as a deliberate attacker would).
    const archive = join(work, 'escape.hfa');
    await writeArchive({ file: archive, options: { archiveName: 'escape.hfa' }, isEncrypted: false, hasIndexSidecar: false }, (writer) =>
      writer.addFile({ path: 'xx/evil.txt', size: 4 }, Readable.from([Buffer.from('evil')])),
    );
    for (const unsafe of ['../evil.txt', '/x/evil.txt']) {
      await writeFile(join(work, 'tampered.hfa'), rewriteIndexPath(await readFile(archive), 'xx/evil.txt', unsafe));
      const result = await extract(work, ['tampered.hfa', 'out-escape']);
      expect({ unsafe, code: result.code }).toEqual({ unsafe, code: 4 });
      expect(result.stderr).toContain(`refusing the unsafe path "${unsafe}"`);
      expect(existsSync(join(work, 'evil.txt'))).toBe(false);
      expect(existsSync(join(work, 'out-escape'))).toBe(false);
    }
  });

  it('stops on zstd data when neither Node.js nor a zstd program can decode it', async () => {
    const work = await tempDir();
    await writeArchive(
      { file: join(work, 'z.hfa'), options: { archiveName: 'z.hfa', compression: 'zstd' }, isEncrypted: false, hasIndexSidecar: false },
      (writer) => writer.addFile({ path: 'z.txt' }, Readable.from([Buffer.from('zstd content\n')])),
    );
    const result = await extract(work, ['z.hfa', 'out'], { PATH: '' });
    if (typeof (zlib as { createZstdDecompress?: unknown }).createZstdDecompress === 'function') {
      expect(result.code).toBe(0);
    } else {
      expect(result.code).toBe(5);
      expect(result.stderr).toContain('install zstd');
      expect(existsSync(join(work, 'out'))).toBe(false);
    }
  });
});

/** Replaces a path in a plain archive's index member, recomputing the index checksum line and the trailer's SHA-256. */
function rewriteIndexPath(archive: Buffer, from: string, to: string): Buffer {
  expect(Buffer.byteLength(to)).toBe(Buffer.byteLength(from));
  const bytes = Buffer.from(archive);
  const tail = bytes.subarray(bytes.length - 2048);
  const trailer = tail.subarray(512, 1024).toString('latin1');
  const indexOffset = Number(/index-offset (\d+)/.exec(trailer)?.[1]);
  const indexLength = Number(/index-length (\d+)/.exec(trailer)?.[1]);
  const indexFile = bytes.subarray(indexOffset, indexOffset + indexLength);
  const at = indexFile.indexOf(`"path":"${from}"`);
  expect(at).toBeGreaterThan(0);
  indexFile.write(`"path":"${to}"`, at);
  const lineEnd = indexFile.indexOf(0x0a);
  const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');
  indexFile.write(sha256(indexFile.subarray(lineEnd + 1)), lineEnd - 64, 'latin1');
  const shaAt = 512 + trailer.indexOf('index-sha256 ') + 'index-sha256 '.length;
  tail.write(sha256(indexFile), shaAt, 'latin1');
  return bytes;
}

describe('recovery kit: extract an encrypted incremental chain', () => {
  const names = ['site/site_2026-11-01.hfa.enc', 'site/site_2026-11-02.hfa.enc', 'site/site_2026-11-03.hfa.enc'];
  const files = names.map((name) => name.slice(name.lastIndexOf('/') + 1));
  const compressions = ['gzip', 'zstd', 'none'] as const;
  let work: string;
  let download: string;
  const states: TreeDescription[] = [];
  const indexes: ArchiveIndex[] = [];

  // Run 1: the full tree. Run 2: a changed file, an added one, a deletion and a rename. Run 3: more of the same.
  const steps: ((root: string) => Promise<void>)[] = [
    buildSourceTree,
    async (root) => {
      await writeFile(join(root, 'secret.txt'), 'only for me, changed and longer\n');
      await writeFile(join(root, 'docs', 'added.txt'), 'added in run 2\n');
      await rm(join(root, 'bin', 'tool.sh'));
      await mkdir(join(root, 'moved'));
      await rename(join(root, 'docs', 'big.bin'), join(root, 'moved', 'big-renamed.bin'));
    },
    async (root) => {
      await appendFile(join(root, UNICODE_PATH), 'さようなら\n');
      await mkdir(join(root, 'later', 'empty'), { recursive: true });
      await rm(join(root, 'docs', 'added.txt'));
    },
  ];

  beforeAll(async () => {
    work = await tempDir();
    download = join(work, 'download');
    const source = join(work, 'source');
    await mkdir(download);
    await mkdir(source);
    for (const [sequence, step] of steps.entries()) {
      await step(source);
      const previous = sequence > 0 ? resolveSnapshot(indexes) : undefined;
      const index = await writeArchive(
        {
          file: join(download, files[sequence]!),
          options: {
            archiveName: names[sequence],
            compression: compressions[sequence],
            chunkSize: 64 * 1024,
            chain: { id: 'chain-site', sequence, baseArchives: names.slice(0, sequence) },
          },
          isEncrypted: true,
          hasIndexSidecar: true,
        },
        (writer) => addDirectoryTree(writer, source, previous ? { previous } : {}),
      );
      indexes.push(index);
      states.push(await describeTree(source));
    }
    // The chain really is incremental: the renamed file's bytes stay in the first archive.
    const renamed = indexes[2]!.entries.find((entry) => entry.path === 'moved/big-renamed.bin');
    expect(renamed?.archive).toBe(names[0]);
    expect(indexes[1]!.renames).toEqual([{ from: 'docs/big.bin', to: 'moved/big-renamed.bin' }]);
    expect(indexes[1]!.deletions).toContain('bin/tool.sh');
  });

  /** A copy of the downloaded chain, for tests that damage or remove files. */
  async function copyOfDownload(): Promise<string> {
    const copy = join(await tempDir(), 'download');
    await mkdir(copy);
    for (const name of await readdir(download)) await copyFile(join(download, name), join(copy, name));
    return copy;
  }

  it('restores the newest snapshot exactly from all three archives', async () => {
    const result = await extract(download, [...withKey(), files[2]!, join(work, 'newest')]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(`${files[0]}: index read from ${files[0]}.index.json`);
    expect(result.stderr).toContain('restored 4 files, 7 folders, 2 symlinks, 1 hard link and 0 database dumps from 3 archives of its chain');
    expectSameTree(await describeTree(join(work, 'newest')), states[2]!);
  });

  it('restores an earlier point of the chain from its own archive and the ones before it', async () => {
    const result = await extract(download, [...withKey(), files[1]!, join(work, 'middle')]);
    expect(result.code).toBe(0);
    expectSameTree(await describeTree(join(work, 'middle')), states[1]!);
  });

  it('restores one file with --only, and a hard link without its target as a copy', async () => {
    const only = join(work, 'only');
    const result = await extract(download, [...withKey(), '--only', 'moved/big-renamed.bin', files[2]!, only]);
    expect(result.code).toBe(0);
    const restored = await describeTree(only);
    expect(Object.keys(restored.records)).toEqual(['moved', 'moved/big-renamed.bin']);
    expect(restored.records['moved/big-renamed.bin']).toEqual(states[2]!.records['moved/big-renamed.bin']);

    const link = await extract(download, [...withKey(), '--only', 'hard.txt', files[2]!, join(work, 'only-link')]);
    expect(link.code).toBe(0);
    const { sameInode: _sameInode, ...copy } = states[2]!.records['hard.txt']!;
    expect((await describeTree(join(work, 'only-link'))).records).toEqual({ 'hard.txt': copy });

    const nothing = await extract(download, [...withKey(), '--only', 'no/such/file', files[2]!, join(work, 'only-none')]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('holdfast-decrypt: nothing at "no/such/file" in this snapshot (paths are relative to the backed-up folder)\n');
  });

  it('names the missing base archive when the chain is incomplete', async () => {
    const copy = await copyOfDownload();
    await rm(join(copy, files[1]!));
    await rm(join(copy, `${files[1]}.index.json`));
    const result = await extract(copy, [...withKey(), files[2]!, 'out']);
    expect(result.code).toBe(6);
    expect(result.stderr).toContain(`missing in ${copy}: ${files[1]} (base archive "${names[1]}")`);
    expect(result.stderr).toContain('Download every archive of the chain into one folder');
    expect(await readdir(copy)).not.toContain('out');
  });

  it('fails on one flipped byte in a base archive, leaving no output', async () => {
    const copy = await copyOfDownload();
    // Flip a byte inside the renamed file's data in the first archive: plaintext offset p is in HFENC record
    // floor(p / 65536), which starts at 62 + record * (65536 + 16).
    const stored = indexes[0]!.entries.find((entry) => entry.path === 'docs/big.bin')!;
    const plaintextOffset = stored.offset + 4096;
    const record = Math.floor(plaintextOffset / 65_536);
    const fileOffset = 62 + record * (65_536 + 16) + (plaintextOffset % 65_536);
    const bytes = await readFile(join(copy, files[0]!));
    bytes[fileOffset] = bytes[fileOffset]! ^ 0x01;
    await writeFile(join(copy, files[0]!), bytes);
    const result = await extract(copy, [...withKey(), files[2]!, 'out']);
    expect(result.code).toBe(4);
    expect(result.stderr).toContain(`chunk ${record} failed authentication (nothing was restored)`);
    expect((await readdir(copy)).filter((name) => name.startsWith('out'))).toEqual([]);
  });

  it('stops with exit 3 on a wrong key, naming both fingerprints but no key', async () => {
    const otherKey = randomBytes(32);
    const result = await extract(download, [files[2]!, join(work, 'wrong-key')], { HOLDFAST_KEY: otherKey.toString('hex') });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('wrong key: this backup needs the key with fingerprint');
    expect(result.stderr).not.toContain(otherKey.toString('hex'));
    expect(existsSync(join(work, 'wrong-key'))).toBe(false);
  });
});
