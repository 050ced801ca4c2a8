import { randomBytes } from 'node:crypto';
import { chmod, lstat, mkdir, readFile, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { craftTar, directorySource, dumpToBuffer } from './helpers.js';
import { removeAll, tempDir } from './tree.js';

// A restore writes small files in one piece on a handle that also sets mode and times, creates them with O_EXCL and
// only clears what is in the way when that fails, and remembers parent folders it has checked. These tests hold what
// that must keep: bytes, modes and times; overwriting what is there; and the symlinked-parent refusal even for a
// folder that was checked earlier in the same restore and then replaced by a link.
let work: string;
const signal = () => new AbortController().signal;

beforeEach(async () => {
  work = await tempDir('restore-small');
});
afterEach(() => removeAll(work));

describe('source-directory restore of small files', () => {
  it('restores 200 files around the size limit with their bytes, modes and times, over files and folders already there', async () => {
    const source = join(work, 'source');
    const sizes = [0, 1, 4095, 65_535, 65_536, 65_537, 150_000];
    const modes = [0o644, 0o600, 0o755, 0o4750];
    const expected = new Map<string, { content: Buffer; mode: number; mtime: number }>();
    for (let index = 0; index < 200; index++) {
      const folder = join(source, `d${index % 5}`);
      await mkdir(folder, { recursive: true });
      const path = join(folder, `f${index}.bin`);
      const content = randomBytes(sizes[index % sizes.length]!);
      const mode = modes[index % modes.length]!;
      const mtime = 1_600_000_000 + index * 61;
      await writeFile(path, content);
      await chmod(path, mode);
      await utimes(path, mtime, mtime);
      expected.set(`d${index % 5}/f${index}.bin`, { content, mode, mtime });
    }
    const { archive } = await dumpToBuffer(directorySource({ paths: [source] }));
    const target = join(work, 'target');
    // In the way: a stale file with other content, a folder where a file goes, a symlink where a file goes.
    await mkdir(join(target, '0-source', 'd0'), { recursive: true });
    await writeFile(join(target, '0-source', 'd0', 'f0.bin'), 'stale content, longer than the file restored over it');
    await mkdir(join(target, '0-source', 'd1', 'f1.bin', 'inner'), { recursive: true });
    await mkdir(join(target, '0-source', 'd2'), { recursive: true });
    await writeFile(join(work, 'elsewhere.txt'), 'must stay');
    await symlink(join(work, 'elsewhere.txt'), join(target, '0-source', 'd2', 'f2.bin'));

    // The setuid files come back without the bit, each named (issue 41); with keepSpecialModes (root) they keep it.
    const withSetuid = [...expected].filter(([, want]) => (want.mode & 0o4000) !== 0).map(([name]) => `0-source/${name}: restored without its setuid bit`);
    const result = await directorySource({ paths: ['/unused'] }).restore(Readable.from([archive]), { target: { path: target }, signal: signal() });
    expect(result.warnings.sort()).toEqual(withSetuid.sort());
    const check = async (keepSpecialModes: boolean) => {
      for (const [name, want] of expected) {
        const path = join(target, '0-source', name);
        expect((await readFile(path)).equals(want.content), name).toBe(true);
        const info = await lstat(path);
        expect(info.isFile(), name).toBe(true);
        expect(info.mode & 0o7777, name).toBe(keepSpecialModes ? want.mode : want.mode & 0o777);
        expect(Math.floor(info.mtimeMs / 1000), name).toBe(want.mtime);
      }
    };
    await check(false);
    expect(await readFile(join(work, 'elsewhere.txt'), 'utf8')).toBe('must stay');
    if (process.getuid?.() === 0) {
      const again = await directorySource({ paths: ['/unused'] }).restore(Readable.from([archive]), { target: { path: target, keepSpecialModes: true }, signal: signal() });
      expect(again.warnings).toEqual([]);
      await check(true);
    }
  });

  it('refuses a symlink that would replace a folder of the archive, so nothing is written through it', async () => {
    const target = join(work, 'target');
    const crafted = await craftTar([
      { name: 'sub/', type: 'directory' },
      { name: 'sub/a/', type: 'directory' },
      { name: 'sub/a/first.txt', body: 'inside a real folder' },
      // Would replace the folder sub/a (checked for first.txt) with a link to the target itself.
      { name: 'sub/a', type: 'symlink', linkname: '..' },
      { name: 'sub/a/second.txt', body: 'would land one level too high' },
    ]);
    const result = await directorySource({ paths: ['/unused'] }).restore(crafted, { target: { path: target }, signal: signal() });
    expect(result.warnings).toEqual(['sub/a: symlink refused, a folder of this archive is already at that path']);
    expect((await lstat(join(target, 'sub', 'a'))).isDirectory()).toBe(true);
    expect(await readFile(join(target, 'sub', 'a', 'first.txt'), 'utf8')).toBe('inside a real folder');
    expect(await readFile(join(target, 'sub', 'a', 'second.txt'), 'utf8')).toBe('would land one level too high');
    await expect(stat(join(target, 'sub', 'second.txt'))).rejects.toThrow(/ENOENT/);
    await expect(stat(join(target, 'second.txt'))).rejects.toThrow(/ENOENT/);
  });
});
