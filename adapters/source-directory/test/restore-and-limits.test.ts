import { createWriteStream } from 'node:fs';
import { mkdir, readdir, readFile, readlink, rm, writeFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deterministicStream } from '@holdfast/testkit';
import { craftTar, directorySource } from './helpers.js';
import { removeAll, tempDir } from './tree.js';

let work: string;
const signal = () => new AbortController().signal;

beforeEach(async () => {
  work = await tempDir('restore');
});
afterEach(() => removeAll(work));

describe('source-directory restore safety', () => {
  it('refuses traversal, absolute names, outside links and writes through symlinked folders; restores the rest', async () => {
    const target = join(work, 'target');
    const crafted = await craftTar([
      { name: '../escape.txt', body: 'outside' },
      { name: '/abs.txt', body: 'absolute' },
      { name: 'ok/../../climb.txt', body: 'outside' },
      { name: 'evil-link', type: 'symlink', linkname: '../../etc' },
      { name: 'abs-link', type: 'symlink', linkname: '/etc/passwd' },
      { name: 'hard', type: 'link', linkname: '../escape.txt' },
      { name: 'sub/', type: 'directory' },
      // Resolves to the target itself (allowed), but writing through it would land one level too high.
      { name: 'sub/up', type: 'symlink', linkname: '..' },
      { name: 'sub/up/through-link.txt', body: 'redirected' },
      { name: 'safe/file.txt', body: 'restored' },
      { name: 'safe/inside-link', type: 'symlink', linkname: 'file.txt' },
    ]);
    const result = await directorySource({ paths: ['/unused'] }).restore(crafted, { target: { path: target }, signal: signal() });

    // Symlinks are judged at the end, once every link of the archive is known (issue 41): their refusals come last.
    expect(result.warnings).toEqual([
      '../escape.txt: refused, ".." in the member name',
      '/abs.txt: refused, absolute member name',
      'ok/../../climb.txt: refused, ".." in the member name',
      'hard: hard link refused, its link target: ".." in the member name',
      'sub/up/through-link.txt: refused, it lies below "sub/up", a symlink of this archive',
      'evil-link: symlink refused, its target "../../etc" resolves outside the restore target',
      'abs-link: symlink refused, its target "/etc/passwd" is absolute, outside the restore target',
    ]);
    expect((await readdir(work)).sort()).toEqual(['target']);
    expect((await readdir(target)).sort()).toEqual(['safe', 'sub']);
    expect(await readFile(join(target, 'safe', 'file.txt'), 'utf8')).toBe('restored');
    expect(await readlink(join(target, 'safe', 'inside-link'))).toBe('file.txt');
    expect(await readlink(join(target, 'sub', 'up'))).toBe('..');
  });

  it('restores every archived root back to its original path with target.originalPaths (dump -> wipe -> restore)', async () => {
    const data = join(work, 'srv', 'data');
    const single = join(work, 'etc', 'app.conf');
    await mkdir(join(data, 'nested'), { recursive: true });
    await mkdir(join(work, 'etc'), { recursive: true });
    await writeFile(join(data, 'nested', 'a.txt'), 'alpha');
    await writeFile(join(data, 'b.txt'), 'bravo');
    await writeFile(single, 'config=1');
    const source = directorySource({ paths: [data, single] });
    const handle = await source.dump({ databases: [], signal: signal() });
    const chunks: Buffer[] = [];
    for await (const chunk of handle.stream) chunks.push(chunk as Buffer);
    await handle.done;
    await rm(join(work, 'srv'), { recursive: true });
    await writeFile(single, 'changed since the backup');

    const result = await source.restore(Readable.from([Buffer.concat(chunks)]), { target: { originalPaths: true }, signal: signal() });

    expect(result.warnings).toEqual([]);
    expect(await readFile(join(data, 'nested', 'a.txt'), 'utf8')).toBe('alpha');
    expect(await readFile(join(data, 'b.txt'), 'utf8')).toBe('bravo');
    expect(await readFile(single, 'utf8')).toBe('config=1');
    expect((await readdir(work)).sort()).toEqual(['etc', 'srv']);
  });

  it('refuses original-path members of roots the source does not configure, and path + originalPaths together', async () => {
    const crafted = await craftTar([{ name: '7-ghost/file.txt', body: 'x' }, { name: 'no-index.txt', body: 'y' }, { name: '0-data/ok.txt', body: 'ok' }]);
    const data = join(work, 'data');
    const result = await directorySource({ paths: [data] }).restore(crafted, { target: { originalPaths: true }, signal: signal() });
    expect(result.warnings).toEqual([
      '7-ghost/file.txt: refused, no configured path for archive root "7-ghost"',
      'no-index.txt: refused, no configured path for archive root "no-index.txt"',
    ]);
    expect(await readFile(join(data, 'ok.txt'), 'utf8')).toBe('ok');
    await expect(
      directorySource({ paths: [data] }).restore(await craftTar([]), { target: { path: join(work, 't'), originalPaths: true }, signal: signal() }),
    ).rejects.toThrow(/either target\.path or target\.originalPaths/);
  });

  it('needs a target path and rejects an empty stream', async () => {
    const source = directorySource({ paths: ['/unused'] });
    await expect(source.restore(await craftTar([]), { target: {}, signal: signal() })).rejects.toThrow(/restore needs target\.path .* or target\.originalPaths/);
    await expect(source.restore(await craftTar([]), { target: { path: join(work, 't') }, signal: signal() })).rejects.toThrow(
      /holds no tar entries/,
    );
  });
});

/** Descriptors of this process currently open on one of `files`, read from /proc/self/fd. */
async function openDescriptorsOn(files: Set<string>): Promise<number> {
  let count = 0;
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (files.has(target)) count++;
  }
  return count;
}

/** Reads a dump slowly, sampling open descriptors on the tree's files after every chunk; returns the peak. */
async function peakOpenFiles(config: Record<string, unknown>, files: Set<string>, engineOptions?: Record<string, unknown>): Promise<number> {
  const handle = await directorySource(config).dump({ databases: [], signal: signal(), engineOptions });
  let peak = 0;
  for await (const _chunk of handle.stream) {
    peak = Math.max(peak, await openDescriptorsOn(files));
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  expect((await handle.done).warnings).toEqual([]);
  return peak;
}

describe('source-directory read-ahead', () => {
  let root: string;
  let files: Set<string>;

  beforeEach(async () => {
    root = join(work, 'many');
    await mkdir(root);
    files = new Set<string>();
    for (let index = 0; index < 24; index++) {
      const path = join(root, `file-${String(index).padStart(2, '0')}.bin`);
      await pipeline(deterministicStream(300 * 1024, { seed: path }), createWriteStream(path));
      files.add(path);
    }
  });

  it('keeps at most maxConcurrentFiles files open, and does open several ahead', async () => {
    const peak = await peakOpenFiles({ paths: [root], maxConcurrentFiles: 3 }, files);
    expect(peak).toBeLessThanOrEqual(3);
    expect(peak).toBeGreaterThanOrEqual(2);
  });

  it('lets the job override the limit through engineOptions.maxConcurrentFiles, validated', async () => {
    const peak = await peakOpenFiles({ paths: [root], maxConcurrentFiles: 8 }, files, { maxConcurrentFiles: 1 });
    expect(peak).toBe(1);
    await expect(
      directorySource({ paths: [root] }).dump({ databases: [], signal: signal(), engineOptions: { maxConcurrentFiles: 40 } }),
    ).rejects.toThrow(/maxConcurrentFiles must be an integer from 1 to 16, got "40"/);
  });

  it('rejects a config without paths or with a relative path, naming the field', () => {
    expect(() => directorySource({ paths: [] })).toThrow(/paths: at least one path is required/);
    expect(() => directorySource({ paths: ['relative/dir'] })).toThrow(/paths\.0: each path must be absolute/);
  });
});
