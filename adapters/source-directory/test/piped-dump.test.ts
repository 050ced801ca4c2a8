// The archive writer's own process (issue 42): when the engine offers its compressor's stdin
// (DumpOptions.compressorInput), the directory source writes the tar from a child process straight into it. These
// tests stand a real child process (`cat`, `head`) in for the compressor and check that the tar is byte for byte the
// one written in-process and the golden fixture, that the count and warnings come back, and that a reader that goes
// away or an abort end the dump with a clear error and no process left.
import { execFileSync, spawn, type ChildProcessByStdio } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DumpHandle } from '@holdfast/sdk';
import { canPipeDump } from '../src/internal/piped-dump.js';
import { directorySource, dumpToBuffer } from './helpers.js';
import { normalizeOwners, sha256, writeGoldenTree } from './golden-tree.js';
import { removeAll, seedTree, tempDir } from './tree.js';

type Reader = ChildProcessByStdio<Writable, Readable, null>;

let work: string;
beforeEach(async () => {
  work = await tempDir('piped');
});
afterEach(() => removeAll(work));

/** A child process standing in for the compressor: what it prints is what it was given (or its first bytes). */
function startReader(command: string, args: string[] = []): Reader {
  return spawn(command, args, { stdio: ['pipe', 'pipe', 'ignore'] });
}

/** Process ids of archive writers still running for `root` (its path is on their command line). */
function writersOf(root: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', `pack-child.js.*${root}`], { encoding: 'utf8' }).trim().split('\n');
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

async function collect(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Dumps `paths` through the source's own child into `reader`; lets go of this process's end of its input. */
async function pipedDump(paths: string[], reader: Reader, signal = new AbortController().signal): Promise<DumpHandle> {
  const handle = await directorySource({ paths }).dump({ databases: [], signal, compressorInput: reader.stdin });
  reader.stdin.destroy();
  return handle;
}

describe.skipIf(!canPipeDump())('source-directory dump written by its own process into the compressor (skipped before a build: needs dist/)', () => {
  it('writes the same tar, byte for byte, as the dump in this process, and counts it', async () => {
    const root = join(work, 'tree');
    await seedTree(root);
    await writeFile(join(root, 'large.bin'), Buffer.alloc(3 * 1024 * 1024 + 17, 7));
    const inProcess = await dumpToBuffer(directorySource({ paths: [root] }));
    const reader = startReader('cat');
    const output = collect(reader.stdout);
    const handle = await pipedDump([root], reader);
    expect(handle.piped).toBeDefined();
    const stats = await handle.done;
    const archive = await output;
    expect(archive.length).toBe(inProcess.archive.length);
    expect(sha256(archive)).toBe(sha256(inProcess.archive));
    expect(stats.bytes).toBe(archive.length);
    expect(handle.piped!.bytesWritten()).toBe(archive.length);
    expect(stats.databases).toEqual([root]);
    // The stream the engine would read carries nothing: the bytes went to the compressor.
    expect((await collect(handle.stream)).length).toBe(0);
  });

  it('is byte-identical to the golden archive the earlier code wrote (owners normalized)', async () => {
    const root = join(work, 'golden');
    await writeGoldenTree(root);
    const reader = startReader('cat');
    const output = collect(reader.stdout);
    const stats = await (await pipedDump([root], reader)).done;
    expect(stats.warnings).toEqual([]);
    const recorded = JSON.parse(await readFile(join(import.meta.dirname, 'fixtures', 'golden-archive.json'), 'utf8')) as { sha256: string; bytes: number };
    const normalized = normalizeOwners(await output, process.getuid?.() ?? 0, process.getgid?.() ?? 0);
    expect(normalized.length).toBe(recorded.bytes);
    expect(sha256(normalized)).toBe(recorded.sha256);
  });

  it('carries the warnings of the walk back (a FIFO is not archived)', async () => {
    const root = join(work, 'with-fifo');
    await seedTree(root);
    execFileSync('mkfifo', [join(root, 'queue')]);
    const reader = startReader('cat');
    const output = collect(reader.stdout);
    const stats = await (await pipedDump([root], reader)).done;
    await output;
    expect(stats.warnings).toEqual([`${join(root, 'queue')}: skipped, FIFOs and device files are not archived`]);
  });

  it('fails with the writer\'s reason when the compressor stops reading, and leaves no process', async () => {
    const root = join(work, 'big');
    await seedTree(root);
    await writeFile(join(root, 'large.bin'), Buffer.alloc(8 * 1024 * 1024, 1));
    // Reads 1000 bytes and exits: the writer's next write finds a broken pipe.
    const reader = startReader('head', ['-c', '1000']);
    const output = collect(reader.stdout);
    const handle = await pipedDump([root], reader);
    await expect(handle.done).rejects.toThrow(/archive writer exited with status 1: .*EPIPE/);
    expect((await output).length).toBe(1000);
    expect(writersOf(root)).toEqual([]);
  });

  it('an abort kills the writer and rejects as aborted', async () => {
    const root = join(work, 'stalled');
    await seedTree(root);
    await writeFile(join(root, 'large.bin'), Buffer.alloc(8 * 1024 * 1024, 2));
    // Never reads: the writer blocks on a full pipe until it is killed.
    const reader = startReader('sleep', ['30']);
    const controller = new AbortController();
    const handle = await pipedDump([root], reader, controller.signal);
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort();
    await expect(handle.done).rejects.toMatchObject({ code: 'ABORTED' });
    expect(writersOf(root)).toEqual([]);
    reader.kill('SIGKILL');
  });
});
