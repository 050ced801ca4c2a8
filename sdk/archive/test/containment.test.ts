// Issue 41: the containment rule every restore path applies (RestoreContainment), and the library's own extractors
// (extractAll, restoreSnapshot over a chain) under hostile input: relative symlink chains of depth 2-6 that walk out
// of the target one harmless-looking step at a time, hard links through them, setuid/setgid bits.
import { lstat, mkdir, readdir, readFile, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { createArchiveWriter, readIndex, resolveSnapshot, restoreSnapshot, RestoreContainment, type ArchiveIndex, type ArchiveWriter } from '../src/index.js';
import { countingFileRangeReader, indexFileOf, makeTempDir, writeArchiveFile } from './support/archive-files.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** `a/up -> ..`, `a/up2 -> up/..`, ... `a/up<depth> -> up<depth-1>/..`: each step one level further up. */
function chainLinks(depth: number): [string, string][] {
  const links: [string, string][] = [['a/up', '..']];
  for (let step = 2; step <= depth; step++) links.push([`a/up${step}`, `up${step === 2 ? '' : step - 1}/..`]);
  return links;
}

function settledNames(rule: RestoreContainment<unknown>) {
  const { accepted, refused } = rule.settle();
  return { accepted: accepted.map((link) => link.path), refused: refused.map((link) => link.path) };
}

describe('RestoreContainment', () => {
  for (const depth of [2, 3, 4, 5, 6]) {
    it(`refuses every link of a depth-${depth} chain that leaves the target, and what lies below or links through them`, () => {
      const rule = new RestoreContainment();
      for (const [path, target] of chainLinks(depth)) expect(rule.admit({ path, kind: 'symlink', target })).toMatchObject({ path });
      const last = depth === 1 ? 'a/up' : `a/up${depth}`;
      expect(rule.admit({ path: `${last}/x/evil.txt`, kind: 'file' })).toEqual({ refused: `it lies below "${last}", a symlink of this archive` });
      expect(rule.admit({ path: `${last}/x`, kind: 'directory' })).toMatchObject({ refused: expect.stringContaining('lies below') });
      expect(rule.admit({ path: 'hl3', kind: 'hardlink', target: `${last}/outside-secret.txt` })).toMatchObject({ refused: expect.stringContaining('lies below') });
      const settled = settledNames(rule);
      // `a/up` resolves to the target itself: harmless. Every later link steps out, whatever the archive order.
      expect(settled.accepted).toEqual(['a/up']);
      expect(settled.refused.sort()).toEqual(chainLinks(depth).slice(1).map(([path]) => path).sort());
    });
  }

  it('judges links against the whole set, in any order, and refuses links that only resolve through refused ones', () => {
    const forward = new RestoreContainment();
    const backward = new RestoreContainment();
    const links = chainLinks(4);
    for (const [path, target] of links) forward.admit({ path, kind: 'symlink', target });
    for (const [path, target] of [...links].reverse()) backward.admit({ path, kind: 'symlink', target });
    expect(settledNames(forward).refused.sort()).toEqual(settledNames(backward).refused.sort());

    const loops = new RestoreContainment();
    loops.admit({ path: 'l1', kind: 'symlink', target: 'l2' });
    loops.admit({ path: 'l2', kind: 'symlink', target: 'l1' });
    loops.admit({ path: 'self', kind: 'symlink', target: 'self/x' });
    expect(settledNames(loops)).toEqual({ accepted: [], refused: ['l1', 'l2', 'self'] });
  });

  it('keeps links that stay inside: relative, dangling, through other inside links', () => {
    const rule = new RestoreContainment();
    for (const [path, target] of [
      ['docs/readme-link', '../readme.txt'],
      ['dangling', 'does/not/exist'],
      ['deep/a/b/up', '../../../docs'],
      ['via', 'deep/a/b/up/readme-link'],
      ['dot', './././readme.txt'],
    ] as const) {
      rule.admit({ path, kind: 'symlink', target });
    }
    expect(settledNames(rule)).toEqual({ accepted: ['docs/readme-link', 'dangling', 'deep/a/b/up', 'via', 'dot'], refused: [] });
  });

  it('refuses absolute targets, steps above the target, even ones that come back, and links through absolute links', () => {
    const rule = new RestoreContainment();
    rule.admit({ path: 'abs', kind: 'symlink', target: '/etc/passwd' });
    rule.admit({ path: 'out-and-back', kind: 'symlink', target: '../target/x' });
    rule.admit({ path: 'root', kind: 'symlink', target: '/' });
    rule.admit({ path: 'via-root', kind: 'symlink', target: 'root/etc' });
    const { refused } = rule.settle();
    expect(Object.fromEntries(refused.map((link) => [link.path, link.reason]))).toEqual({
      abs: 'its target "/etc/passwd" is absolute, outside the restore target',
      'out-and-back': 'its target "../target/x" resolves outside the restore target',
      root: 'its target "/" is absolute, outside the restore target',
      'via-root': 'its target "root/etc" leads through "root" to the absolute "/"',
    });
  });

  it('refuses unsafe names, devices and FIFOs, a symlink over a folder of the archive; a later member replaces a link', () => {
    const rule = new RestoreContainment();
    expect(rule.admit({ path: '../x', kind: 'file' })).toEqual({ refused: '".." in the member name' });
    expect(rule.admit({ path: '/x', kind: 'file' })).toEqual({ refused: 'absolute member name' });
    expect(rule.admit({ path: 'a\0b', kind: 'file' })).toEqual({ refused: 'NUL in the member name' });
    expect(rule.admit({ path: 'dev/null', kind: 'device' })).toEqual({ refused: 'device nodes are not restored' });
    expect(rule.admit({ path: 'pipe', kind: 'fifo' })).toEqual({ refused: 'FIFOs are not restored' });
    rule.admit({ path: 'folder/file', kind: 'file' });
    expect(rule.admit({ path: 'folder', kind: 'symlink', target: '..' })).toEqual({ refused: 'a folder of this archive is already at that path' });
    rule.admit({ path: 'later', kind: 'symlink', target: '../..' });
    expect(rule.admit({ path: 'later', kind: 'directory' })).toMatchObject({ path: 'later' });
    expect(rule.admit({ path: 'later/inside.txt', kind: 'file' })).toMatchObject({ path: 'later/inside.txt' });
    expect(rule.settle().refused).toEqual([]);
  });

  it('turns a hard link to a symlink into a second symlink, judged like the first', () => {
    const rule = new RestoreContainment<string>();
    rule.admit({ path: 'out', kind: 'symlink', target: '../..', payload: 'out' });
    rule.admit({ path: 'in', kind: 'symlink', target: 'file', payload: 'in' });
    expect(rule.admit({ path: 'hard-out', kind: 'hardlink', target: 'out', payload: 'hard-out' })).toMatchObject({ becameSymlink: true });
    expect(rule.admit({ path: 'hard-in', kind: 'hardlink', target: 'in', payload: 'hard-in' })).toMatchObject({ becameSymlink: true });
    const { accepted, refused } = rule.settle();
    expect(accepted.map((link) => [link.path, link.target, link.payload])).toEqual([
      ['in', 'file', 'in'],
      ['hard-in', 'file', 'hard-in'],
    ]);
    expect(refused.map((link) => link.path)).toEqual(['out', 'hard-out']);
  });

  it('drops setuid, setgid and sticky bits with a note unless keepSpecialModes', () => {
    const rule = new RestoreContainment();
    expect(rule.admit({ path: 'suid', kind: 'file', mode: 0o4755 })).toEqual({ path: 'suid', mode: 0o755, note: 'restored without its setuid bit' });
    expect(rule.admit({ path: 'sgid', kind: 'file', mode: 0o2755 })).toEqual({ path: 'sgid', mode: 0o755, note: 'restored without its setgid bit' });
    expect(rule.admit({ path: 'tmp', kind: 'directory', mode: 0o1777 })).toEqual({ path: 'tmp', mode: 0o777, note: 'restored without its sticky bit' });
    expect(rule.admit({ path: 'all', kind: 'file', mode: 0o7777 })).toEqual({ path: 'all', mode: 0o777, note: 'restored without its setuid and setgid and sticky bits' });
    expect(rule.admit({ path: 'plain', kind: 'file', mode: 0o640 })).toEqual({ path: 'plain', mode: 0o640 });
    const keeping = new RestoreContainment({ keepSpecialModes: true });
    expect(keeping.admit({ path: 'suid', kind: 'file', mode: 0o4755 })).toEqual({ path: 'suid', mode: 0o4755 });
  });
});

/** Writes a seekable archive into `dir` and returns its index. */
async function archiveIn(dir: string, name: string, fill: (writer: ArchiveWriter) => Promise<void>, chain: { id: string; sequence: number; baseArchives: string[] } | null = null): Promise<ArchiveIndex> {
  const result = await writeArchiveFile(createArchiveWriter({ archiveName: name, chain }), join(dir, name), fill);
  return readIndex({ sidecar: indexFileOf(result) });
}

const text = (writer: ArchiveWriter, path: string, body: string, mode = 0o644) => writer.addFile({ path, size: Buffer.byteLength(body), mode }, Readable.from([Buffer.from(body)]));

describe('restoreSnapshot under the containment rule', () => {
  for (const depth of [2, 3, 4, 5, 6]) {
    it(`restores a chain whose incremental run adds a depth-${depth} escape without writing or linking outside`, async () => {
      const work = await makeTempDir('containment');
      cleanups.push(work.cleanup);
      // The target sits six folders deep, so every link of the chain would resolve to a folder of the work dir.
      const target = join(work.path, 'l1', 'l2', 'l3', 'l4', 'l5', 'target');
      await mkdir(target, { recursive: true });
      const base = await archiveIn(work.path, 'run-0.hfa', (writer) => text(writer, 'kept.txt', 'kept'), { id: 'c', sequence: 0, baseArchives: [] });
      const last = `a/up${depth}`;
      const incremental = await archiveIn(
        work.path,
        'run-1.hfa',
        async (writer) => {
          await writer.addReference(base.entries[0]!, 'run-0.hfa');
          await writer.addDirectory({ path: 'a' });
          for (const [path, linkTarget] of chainLinks(depth)) await writer.addSymlink({ path }, linkTarget);
          await text(writer, `${last}/made-by-restore/evil.txt`, 'evil');
          await text(writer, `${last}/outside-secret.txt`, 'planted');
          await writer.addHardLink({ path: 'hl3' }, `${last}/outside-secret.txt`);
          await text(writer, 'suid', '#!', 0o4755);
        },
        { id: 'c', sequence: 1, baseArchives: ['run-0.hfa'] },
      );
      const before = await readdir(work.path, { recursive: true });
      const summary = await restoreSnapshot(resolveSnapshot([base, incremental]), (archive) => countingFileRangeReader(join(work.path, archive)).rangeReader, target, {
        restoreOwnership: false,
      });
      expect((await readdir(work.path, { recursive: true })).filter((path) => !path.includes('target'))).toEqual(before.filter((path) => !path.includes('target')));
      const names = summary.warnings.map((warning) => warning.slice(0, warning.indexOf(': ')));
      expect(names.sort()).toEqual([`${last}/made-by-restore/evil.txt`, `${last}/outside-secret.txt`, 'hl3', 'suid', ...chainLinks(depth).slice(1).map(([path]) => path)].sort());
      expect(await readlink(join(target, 'a', 'up'))).toBe('..');
      for (const [path] of chainLinks(depth).slice(1)) await expect(lstat(join(target, path))).rejects.toThrow(/ENOENT/);
      expect((await lstat(join(target, 'suid'))).mode & 0o7777).toBe(0o755);
      expect(await readFile(join(target, 'kept.txt'), 'utf8')).toBe('kept');
      await expect(lstat(join(target, 'hl3'))).rejects.toThrow(/ENOENT/);
    });
  }

  it('keeps setuid bits with keepSpecialModes when it restores owners, and drops them when it does not', async () => {
    const work = await makeTempDir('containment-modes');
    cleanups.push(work.cleanup);
    const index = await archiveIn(work.path, 'modes.hfa', async (writer) => {
      await writer.addFile({ path: 'suid', size: 1, mode: 0o4755, uid: 1234, gid: 2345 }, Readable.from([Buffer.from('x')]));
    });
    const reader = () => countingFileRangeReader(join(work.path, 'modes.hfa')).rangeReader;
    const withoutOwners = await restoreSnapshot(resolveSnapshot([index]), reader, join(work.path, 'a'), { restoreOwnership: false, keepSpecialModes: true });
    expect(withoutOwners.warnings).toEqual(['suid: restored without its setuid bit']);
    expect((await lstat(join(work.path, 'a', 'suid'))).mode & 0o7777).toBe(0o755);
    if (process.getuid?.() !== 0) return;
    const withOwners = await restoreSnapshot(resolveSnapshot([index]), reader, join(work.path, 'b'), { restoreOwnership: true, keepSpecialModes: true });
    expect(withOwners.warnings).toEqual([]);
    expect(await lstat(join(work.path, 'b', 'suid'))).toMatchObject({ uid: 1234, gid: 2345, mode: expect.any(Number) });
    expect((await lstat(join(work.path, 'b', 'suid'))).mode & 0o7777).toBe(0o4755);
  });
});
