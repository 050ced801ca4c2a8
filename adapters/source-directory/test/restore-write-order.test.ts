import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { craftTar } from './helpers.js';
import { removeAll, tempDir } from './tree.js';

// A restore writes small files with synchronous calls, one after the other, and large files in batched writes on
// libuv's pool (docs/benchmarks.md, "Directory restores without round trips"). These tests count the restore's own
// asynchronous opens (fs/promises): none for small files, one per large file. And they hold the ordering rules: a
// later entry for the same path wins, a hard link sees the file before it, a failed write fails the restore, and the
// restore lets the event loop run while it writes.
const handles = vi.hoisted(() => ({ opened: 0, open: 0 }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const actual = await importOriginal<typeof import('node:fs/promises')>();
  return {
    ...actual,
    open: async (...args: Parameters<typeof actual.open>) => {
      const handle = await actual.open(...args);
      handles.opened += 1;
      handles.open += 1;
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
  work = await tempDir('restore-order');
  handles.opened = 0;
  handles.open = 0;
});
afterEach(() => removeAll(work));

describe('source-directory restore: how files are written', () => {
  it('writes small files synchronously: the later of two entries for one path wins, and a hard link sees the file before it', async () => {
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
    // No round trip to the pool per small file: nothing went through fs/promises' open.
    expect(handles.opened).toBe(0);
  });

  it('writes a large file in batches over several input pieces, with its bytes, and closes it', async () => {
    const tar = (await import('tar-stream')).default;
    const pack = tar.pack();
    // 3 MiB + 5 bytes: twelve full batches of 256 KiB and a short one, fed in 64 KiB pieces as the engine hands them over.
    const content = Buffer.alloc(3 * 1024 * 1024 + 5);
    for (let index = 0; index < content.length; index += 4096) content.writeUInt32BE(index, index);
    pack.entry({ name: 'big.bin', size: content.length, mode: 0o640, mtime: new Date(1_600_000_000_000) }, content);
    pack.finalize();
    const chunks: Buffer[] = [];
    for await (const chunk of pack) chunks.push(chunk as Buffer);
    const whole = Buffer.concat(chunks);
    const pieces = Array.from({ length: Math.ceil(whole.length / 65_536) }, (_, index) => whole.subarray(index * 65_536, (index + 1) * 65_536));
    const target = join(work, 'target');
    const result = await directorySource({ paths: ['/unused'] }).restore(Readable.from(pieces), { target: { path: target }, signal: signal() });
    expect(result.warnings).toEqual([]);
    expect((await readFile(join(target, 'big.bin'))).equals(content)).toBe(true);
    const info = await stat(join(target, 'big.bin'));
    expect(info.mode & 0o777).toBe(0o640);
    expect(info.mtimeMs).toBe(1_600_000_000_000);
    expect(handles.opened).toBe(1);
    expect(handles.open).toBe(0);
  });

  it('fails the restore when a small file cannot be written, and writes nothing after it', async () => {
    const crafted = await craftTar([
      { name: 'plain', body: 'a file' },
      ...Array.from({ length: 8 }, (_, index) => ({ name: `ok-${index}.txt`, body: 'fine' })),
      // Below a regular file: the folder cannot be created.
      { name: 'plain/inside.txt', body: 'cannot be written' },
      { name: 'after.txt', body: 'never reached' },
    ]);
    const target = join(work, 'target');
    await expect(directorySource({ paths: ['/unused'] }).restore(crafted, { target: { path: target }, signal: signal() })).rejects.toThrow(/ENOTDIR|EEXIST|not a directory/);
    await expect(stat(join(target, 'after.txt'))).rejects.toThrow(/ENOENT/);
    await expect(stat(join(target, 'ok-0.txt'))).rejects.toThrow(/ENOENT/);
  });

  it('lets timers run while it writes 2,000 small files synchronously', async () => {
    const crafted = await craftTar(Array.from({ length: 2000 }, (_, index) => ({ name: `d${index % 20}/f${index}.txt`, body: 'x'.repeat(1024) })));
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 1);
    const started = performance.now();
    try {
      const result = await directorySource({ paths: ['/unused'] }).restore(crafted, { target: { path: join(work, 'target') }, signal: signal() });
      expect(result.warnings).toEqual([]);
    } finally {
      clearInterval(timer);
    }
    // As the dump's test (event-loop-yield.test.ts): the writes are synchronous, yet the timer fires several times (the
    // restore yields every 2 ms besides the turns its folder creations give); a restore that blocked would let it fire
    // at most once or twice.
    expect(performance.now() - started).toBeGreaterThan(5);
    expect(ticks).toBeGreaterThanOrEqual(3);
    expect(await readFile(join(work, 'target', 'd7', 'f1987.txt'), 'utf8')).toBe('x'.repeat(1024));
  });
});
