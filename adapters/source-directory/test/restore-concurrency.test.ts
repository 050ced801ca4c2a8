import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { craftTar } from './helpers.js';
import { removeAll, tempDir } from './tree.js';

// A restore writes small files several at once. These tests count the files open at the same time through the
// restore's own `open`, and hold the ordering rules: a later entry for the same path wins, a hard link or any other
// entry waits for the files before it, and a failed write fails the restore.
const handles = vi.hoisted(() => ({ open: 0, peak: 0 }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...actual,
    open: async (...args: Parameters<typeof actual.open>) => {
      const handle = await actual.open(...args);
      handles.open += 1;
      handles.peak = Math.max(handles.peak, handles.open);
      // A slow disk: each file stays open a little, so writes that can overlap do.
      await new Promise((resolve) => setTimeout(resolve, 2));
      const close = handle.close.bind(handle);
      return Object.assign(handle, {
        close: async () => {
          handles.open -= 1;
          return close();
        },
      });
    },
  };
});

const { directorySource } = await import('./helpers.js');

let work: string;
const signal = () => new AbortController().signal;
beforeEach(async () => {
  work = await tempDir('restore-lanes');
  handles.open = 0;
  handles.peak = 0;
});
afterEach(() => removeAll(work));

describe('source-directory restore: small files written several at once', () => {
  it('writes up to four at a time, the later of two entries for one path wins, and a hard link sees the file before it', async () => {
    const entries = Array.from({ length: 40 }, (_, index) => ({ name: `many/file-${index}.txt`, body: `content ${index}` }));
    const crafted = await craftTar([
      { name: 'many/', type: 'directory' },
      ...entries,
      { name: 'many/dup.txt', body: 'first' },
      { name: 'many/dup.txt', body: 'second, written after the first' },
      { name: 'many/source.txt', body: 'linked' },
      { name: 'many/hard', type: 'link', linkname: 'many/source.txt' },
    ]);
    const target = join(work, 'target');
    const result = await directorySource({ paths: ['/unused'] }).restore(crafted, { target: { path: target }, signal: signal() });
    expect(result.warnings).toEqual([]);
    for (let index = 0; index < 40; index++) expect(await readFile(join(target, 'many', `file-${index}.txt`), 'utf8')).toBe(`content ${index}`);
    expect(await readFile(join(target, 'many', 'dup.txt'), 'utf8')).toBe('second, written after the first');
    expect((await stat(join(target, 'many', 'hard'))).ino).toBe((await stat(join(target, 'many', 'source.txt'))).ino);
    expect(handles.peak).toBeGreaterThanOrEqual(2);
    expect(handles.peak).toBeLessThanOrEqual(4);
    expect(handles.open).toBe(0);
  });

  it('fails the restore when a small file cannot be written, after the writes still running ended', async () => {
    const crafted = await craftTar([
      { name: 'plain', body: 'a file' },
      ...Array.from({ length: 8 }, (_, index) => ({ name: `ok-${index}.txt`, body: 'fine' })),
      // Below a regular file: the folder cannot be created.
      { name: 'plain/inside.txt', body: 'cannot be written' },
      { name: 'after.txt', body: 'never reached' },
    ]);
    const target = join(work, 'target');
    await expect(directorySource({ paths: ['/unused'] }).restore(crafted, { target: { path: target }, signal: signal() })).rejects.toThrow(/ENOTDIR|EEXIST|not a directory/);
    expect(handles.open).toBe(0);
    await expect(stat(join(target, 'after.txt'))).rejects.toThrow(/ENOENT/);
  });
});
