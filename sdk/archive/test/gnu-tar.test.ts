import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { addDirectoryTree, createArchiveWriter } from '../src/index.js';
import { makeTempDir, writeArchiveFile } from './support/archive-files.js';
import { generateTree } from './support/generate-tree.js';
import { describeTree } from './support/tree-compare.js';

const run = promisify(execFile);
// A UTF-8 locale and literal quoting make GNU tar print unicode names as they are.
const tarEnv = { ...process.env, LC_ALL: 'C.UTF-8' };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('GNU tar reads an uncompressed archive', () => {
  it('lists every member and extracts a tree identical to the source', async () => {
    const work = await makeTempDir('gnu-tar');
    cleanups.push(work.cleanup);
    const source = join(work.path, 'source');
    const generated = await generateTree(source, 400);
    const archive = join(work.path, 'tree.tar');
    const dump = Buffer.from('-- dump of shop\nCREATE TABLE orders (id int);\n');
    const result = await writeArchiveFile(createArchiveWriter({ archiveName: 'tree.tar' }), archive, async (writer) => {
      await addDirectoryTree(writer, source);
      await writer.addDatabaseDump('shop', Readable.from([dump]), { size: dump.length });
    });

    const listing = await run('tar', ['--quoting-style=literal', '-tf', archive], { env: tarEnv, maxBuffer: 64 * 1024 * 1024 });
    expect(listing.stderr).toBe('');
    const listed = new Set(listing.stdout.split('\n').filter(Boolean).map((name) => name.replace(/\/$/, '')));
    for (const entry of result.index.entries) expect(listed.has(entry.path), entry.path).toBe(true);
    expect(listed.has(generated.longPath)).toBe(true);
    expect(listed.has(generated.unicodePath)).toBe(true);
    expect(listed.size).toBe(result.index.entries.length + 3); // + manifest, index, trailer

    const verbose = await run('tar', ['--quoting-style=literal', '-tvf', archive], { env: tarEnv, maxBuffer: 64 * 1024 * 1024 });
    expect(verbose.stdout).toMatch(/^lrwxrwxrwx .* dangling-link -> does-not-exist$/m);
    expect(verbose.stdout).toMatch(/^hrw.* hard-link-1 link to d2\/sub2\/file-2\.txt$/m);

    const extracted = join(work.path, 'by-gnu-tar');
    await run('mkdir', [extracted]);
    const extraction = await run('tar', ['-xf', archive, '-C', extracted], { env: tarEnv });
    expect(extraction.stderr).toBe('');
    const before = await describeTree(source);
    const after = await describeTree(extracted, { exclude: (path) => path === '.holdfast' });
    expect(after).toEqual(before);
    const dumpOut = await run('tar', ['-xOf', archive, '.holdfast/databases/shop'], { env: tarEnv, encoding: 'buffer' });
    expect(Buffer.compare(dumpOut.stdout, dump)).toBe(0);
  });

  it('extracts a dump of unknown size as numbered parts that concatenate back to the dump', async () => {
    const work = await makeTempDir('gnu-tar-parts');
    cleanups.push(work.cleanup);
    const archive = join(work.path, 'dumps.tar');
    const dump = Buffer.from(Array.from({ length: 20_000 }, (_, row) => `INSERT INTO t VALUES (${row});\n`).join(''));
    await writeArchiveFile(createArchiveWriter({ chunkSize: 64 * 1024 }), archive, async (writer) => {
      await writer.addDatabaseDump('big', Readable.from([dump]));
    });
    const extracted = join(work.path, 'out');
    await run('mkdir', [extracted]);
    await run('tar', ['-xf', archive, '-C', extracted]);
    const joined = await run('sh', ['-c', 'cat .holdfast/databases/big.part-*'], { cwd: extracted, encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
    expect(dump.length).toBeGreaterThan(3 * 64 * 1024);
    expect(Buffer.compare(joined.stdout, dump)).toBe(0);
  });

  it('extracts gzip-compressed members as parts that plain cat | gunzip turns back into the file', async () => {
    const work = await makeTempDir('gnu-tar-gzip');
    cleanups.push(work.cleanup);
    const archive = join(work.path, 'gz.tar');
    const content = Buffer.from(Array.from({ length: 30_000 }, (_, line) => `line ${line} of a log file\n`).join(''));
    await writeArchiveFile(createArchiveWriter({ compression: 'gzip', chunkSize: 64 * 1024 }), archive, async (writer) => {
      await writer.addFile({ path: 'logs/app.log', size: content.length }, Readable.from([content]));
    });
    const extracted = join(work.path, 'out');
    await run('mkdir', [extracted]);
    const extraction = await run('tar', ['-xf', archive, '-C', extracted]);
    expect(extraction.stderr).toBe('');
    const parts = await run('sh', ['-c', 'ls logs/app.log.part-*.gz | wc -l'], { cwd: extracted });
    expect(Number(parts.stdout.trim())).toBe(Math.ceil(content.length / (64 * 1024)));
    const joined = await run('sh', ['-c', 'cat logs/app.log.part-*.gz | gunzip'], { cwd: extracted, encoding: 'buffer', maxBuffer: 64 * 1024 * 1024 });
    expect(Buffer.compare(joined.stdout, content)).toBe(0);
  });
});
