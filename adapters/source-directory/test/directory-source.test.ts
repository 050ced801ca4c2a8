import { execFileSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError } from '@holdfast/sdk';
import { deterministicStream } from '@holdfast/testkit';
import { directorySource, dumpToBuffer, membersOf } from './helpers.js';
import { removeAll, tempDir } from './tree.js';

let work: string;
const signal = () => new AbortController().signal;

beforeEach(async () => {
  work = await tempDir('unit');
});
afterEach(() => removeAll(work));

async function errorOf(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isAdapterError(error)) throw new Error(`expected an AdapterError, got ${String(error)}`);
  return { code: error.code, message: error.message };
}

describe('source-directory dump', () => {
  it('names members <index>-<basename> per root, applies exclude globs and picks a subset through databases', async () => {
    const first = join(work, 'a', 'data');
    const second = join(work, 'b', 'data');
    await mkdir(join(first, 'node_modules', 'x'), { recursive: true });
    await mkdir(join(second, 'cache'), { recursive: true });
    await writeFile(join(first, 'keep.txt'), 'keep');
    await writeFile(join(first, 'node_modules', 'x', 'index.js'), 'dropped');
    await writeFile(join(first, 'debug.log'), 'dropped');
    await writeFile(join(second, 'cache', 'blob'), 'dropped');
    await writeFile(join(second, 'other.txt'), 'kept');
    const single = join(work, 'single.conf');
    await writeFile(single, 'single');
    const source = directorySource({ paths: [first, second, single], exclude: ['node_modules', '*.log', 'cache'] });

    expect(await source.listDatabases()).toEqual([first, second, single]);
    const { archive, stats } = await dumpToBuffer(source);
    expect((await membersOf(archive)).map((m) => `${m.type}:${m.name}`)).toEqual([
      'directory:0-data/',
      'file:0-data/keep.txt',
      'directory:1-data/',
      'file:1-data/other.txt',
      'file:2-single.conf',
    ]);
    expect(stats).toMatchObject({ bytes: archive.length, databases: [first, second, single], warnings: [] });

    const subset = await dumpToBuffer(source, { databases: [second] });
    expect((await membersOf(subset.archive)).map((m) => m.name)).toEqual(['1-data/', '1-data/other.txt']);
    expect((await errorOf(source.dump({ databases: ['/not/configured'], signal: signal() }))).code).toBe('CONFIG');
  });

  it('writes unicode and long names as pax records that GNU tar lists unchanged', async () => {
    const root = join(work, 'tree');
    const long = `${'x'.repeat(120)}.txt`;
    await mkdir(join(root, 'naïve'), { recursive: true });
    await writeFile(join(root, 'naïve', '東京.txt'), 'tokyo');
    await writeFile(join(root, long), 'long');
    await symlink('naïve/東京.txt', join(root, 'ünï-link'));
    const { archive } = await dumpToBuffer(directorySource({ paths: [root] }));
    expect(archive.includes(Buffer.from('path=0-tree/naïve/東京.txt\n'))).toBe(true);
    expect(archive.includes(Buffer.from('linkpath=naïve/東京.txt\n'))).toBe(true);
    const archivePath = join(work, 'out.tar');
    await writeFile(archivePath, archive);
    const listed = execFileSync('tar', ['-tvf', archivePath], { encoding: 'utf8' });
    expect(listed).toContain('0-tree/naïve/東京.txt');
    expect(listed).toContain(`0-tree/${long}`);
    expect(listed).toContain('0-tree/ünï-link -> naïve/東京.txt');
  });

  it('fails before the first byte with NOT_FOUND when a root is missing', async () => {
    const present = join(work, 'present');
    await mkdir(present);
    const missing = join(work, 'unmounted');
    const source = directorySource({ paths: [present, missing] });
    const error = await errorOf(source.dump({ databases: [], signal: signal() }));
    expect(error.code).toBe('NOT_FOUND');
    expect(error.message).toContain(missing);
    const health = await source.check();
    expect(health.ok).toBe(false);
    expect(health.message).toContain(missing);
  });

  // Root can read every file, so "unreadable" is produced the way it really happens on live systems: the file is
  // deleted after the walk listed its folder but before the dump reached it. With one file open at a time and the
  // stream unread, the dump is provably parked inside the 8 MiB file when the victim is deleted.
  it('records a file that vanished mid-walk as a warning and archives the rest', async () => {
    const root = join(work, 'live');
    await mkdir(root);
    await pipeline(deterministicStream(8 * 1024 * 1024, { seed: 'first' }), createWriteStream(join(root, 'a-big.bin')));
    await writeFile(join(root, 'b-victim.txt'), 'will vanish');
    await writeFile(join(root, 'c-after.txt'), 'after');
    const handle = await directorySource({ paths: [root], maxConcurrentFiles: 1 }).dump({ databases: [], signal: signal() });
    await rm(join(root, 'b-victim.txt'));
    const chunks: Buffer[] = [];
    for await (const chunk of handle.stream) chunks.push(chunk as Buffer);
    const stats = await handle.done;
    expect(stats.warnings).toEqual([`${join(root, 'b-victim.txt')}: skipped, it vanished while the backup ran`]);
    const members = (await membersOf(Buffer.concat(chunks))).map((m) => m.name);
    expect(members).toEqual(['0-live/', '0-live/a-big.bin', '0-live/c-after.txt']);
  });

  it('warns about dangling symlinks when following links, and keeps them as links otherwise', async () => {
    const root = join(work, 'links');
    await mkdir(root);
    await writeFile(join(root, 'real.txt'), 'real');
    await symlink('real.txt', join(root, 'good'));
    await symlink('missing.txt', join(root, 'dangling'));
    const followed = await dumpToBuffer(directorySource({ paths: [root], followSymlinks: true }));
    expect(followed.stats.warnings).toEqual([`${join(root, 'dangling')}: skipped, dangling symlink`]);
    expect((await membersOf(followed.archive)).map((m) => `${m.type}:${m.name}`)).toEqual([
      'directory:0-links/',
      'file:0-links/good',
      'file:0-links/real.txt',
    ]);
    const kept = await dumpToBuffer(directorySource({ paths: [root] }));
    expect(kept.stats.warnings).toEqual([]);
    expect((await membersOf(kept.archive)).filter((m) => m.type === 'symlink').map((m) => `${m.name}->${m.linkname}`)).toEqual([
      '0-links/dangling->missing.txt',
      '0-links/good->real.txt',
    ]);
  });
});
