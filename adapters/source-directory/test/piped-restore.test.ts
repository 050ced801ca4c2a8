// The tar extractor's own process (issue 42): when the engine decodes in a child process and offers its output
// (RestoreOptions.decodedInput), the directory source extracts in a child process of its own whose stdin the decoder
// writes into. A real child (`cat` of a tar file, or of its first half) stands in for the engine's decoder here. The
// tests check that the restored tree is the one the in-process restore writes, that nothing is moved into place
// before the engine's verdict (and nothing at all when it says no), and that an abort or a cut input end the restore
// with a clear error, no staging left and no extractor running.
import { execFileSync, spawn } from 'node:child_process';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DecodedRestoreInput } from '@holdfast/sdk';
import { canPipeRestore } from '../src/internal/piped-restore.js';
import { restoreArchive } from '../src/internal/restore.js';
import { directorySource, dumpToBuffer } from './helpers.js';
import { describeTree, removeAll, seedTree, tempDir } from './tree.js';

let work: string;
beforeEach(async () => {
  work = await tempDir('piped-restore');
});
afterEach(() => removeAll(work));

/** Extractors still running for `target` (its path is on their command line). */
function extractorsOf(target: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', `restore-child.js.*${target}`], { encoding: 'utf8' }).trim().split('\n');
  } catch {
    return []; // pgrep exits 1 when nothing matches
  }
}

/** A decoded input whose "decoder" is `cat` (of `bytes` of the file), and a verdict the test gives. */
function decodedFrom(tarFile: string, bytes?: number) {
  let pass!: () => void;
  let fail!: (error: Error) => void;
  const verified = new Promise<void>((resolve, reject) => {
    pass = resolve;
    fail = reject;
  });
  verified.catch(() => undefined);
  const calls: string[] = [];
  const input: DecodedRestoreInput = {
    decodeInto(sink: Writable) {
      calls.push('decodeInto');
      const args = bytes === undefined ? ['cat', tarFile] : ['head', '-c', String(bytes), tarFile];
      spawn(args[0] as string, args.slice(1), { stdio: ['ignore', sink, 'ignore'] });
      sink.destroy();
    },
    open(): Readable {
      throw new Error('open() must not be called when the extractor can run');
    },
    verified,
  };
  return { input, pass, fail, calls };
}

/** Staging folders left next to the targets (`.<target>…`): none once a restore settled. */
const stagingLeft = async (): Promise<string[]> => (await readdir(work)).filter((name) => name.startsWith('.'));

const empty = async () => (await import('node:stream')).Readable.from([]);
const waitFor = async (check: () => Promise<boolean>, what: string) => {
  for (let attempt = 0; attempt < 250; attempt++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`timed out waiting for ${what}`);
};

describe.skipIf(!canPipeRestore())('source-directory restore in its own process, fed by the decoder (skipped before a build: needs dist/)', () => {
  async function archiveOfSeededTree(): Promise<{ root: string; tarFile: string; size: number }> {
    const root = join(work, 'tree');
    await seedTree(root);
    const { archive } = await dumpToBuffer(directorySource({ paths: [root] }));
    const tarFile = join(work, 'backup.tar');
    await writeFile(tarFile, archive);
    return { root, tarFile, size: archive.length };
  }

  it('restores the same tree as the restore in this process, once the engine verified the bytes', async () => {
    const { root, tarFile } = await archiveOfSeededTree();
    const source = directorySource({ paths: [root] });
    const inProcessTarget = join(work, 'in-process');
    const { createReadStream } = await import('node:fs');
    await source.restore(createReadStream(tarFile), { target: { path: inProcessTarget }, signal: new AbortController().signal });

    const target = join(work, 'piped');
    await mkdir(target);
    const decoded = decodedFrom(tarFile);
    const restoring = source.restore(await empty(), { target: { path: target }, signal: new AbortController().signal, decodedInput: decoded.input });
    await waitFor(async () => extractorsOf(target).length === 1, 'the extractor');
    // Everything gets staged next to the target, and nothing is moved into it until the verdict.
    await waitFor(async () => (await stagingLeft()).length === 1, 'the staging folder');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await readdir(target)).toEqual([]);
    decoded.pass();
    const result = await restoring;
    expect(decoded.calls).toEqual(['decodeInto']);
    expect(result.warnings).toEqual([]);
    const restored = await describeTree(target);
    expect(Object.keys(restored).length).toBeGreaterThan(10);
    expect(restored).toEqual(await describeTree(inProcessTarget));
    expect(extractorsOf(target)).toEqual([]);
    expect(await stagingLeft()).toEqual([]);
  });

  it('a backup the engine rejects is not restored: the target stays as it was, with no staging left', async () => {
    const { root, tarFile } = await archiveOfSeededTree();
    const target = join(work, 'rejected');
    await mkdir(target);
    await writeFile(join(target, 'kept.txt'), 'was here');
    const decoded = decodedFrom(tarFile);
    const restoring = directorySource({ paths: [root] }).restore(await empty(), { target: { path: target }, signal: new AbortController().signal, decodedInput: decoded.input });
    await waitFor(async () => extractorsOf(target).length === 1, 'the extractor');
    decoded.fail(new Error('checksum mismatch: the file\'s SHA-256 is abc, the sidecar records def'));
    await expect(restoring).rejects.toThrow(/\[source-directory\] .*the backup did not pass the engine's checks: checksum mismatch/);
    expect(await readdir(target)).toEqual(['kept.txt']);
    expect(await stagingLeft()).toEqual([]);
    expect(extractorsOf(target)).toEqual([]);
  });

  it('an input cut half-way fails the restore and leaves nothing behind, whatever the verdict', async () => {
    const { root, tarFile, size } = await archiveOfSeededTree();
    const target = join(work, 'cut');
    const decoded = decodedFrom(tarFile, Math.floor(size / 2) + 100);
    decoded.pass();
    await expect(directorySource({ paths: [root] }).restore(await empty(), { target: { path: target }, signal: new AbortController().signal, decodedInput: decoded.input })).rejects.toThrow(
      /\[source-directory\] restore into .* failed: .*(end of data|Unexpected end)/i,
    );
    expect(await readdir(target).catch(() => [])).toEqual([]);
    expect(await stagingLeft()).toEqual([]);
  });

  it('an abort while the extractor waits for the verdict stops it: ABORTED, no staging, no process', async () => {
    const { root, tarFile } = await archiveOfSeededTree();
    const target = join(work, 'aborted');
    const decoded = decodedFrom(tarFile);
    const controller = new AbortController();
    const restoring = directorySource({ paths: [root] }).restore(await empty(), { target: { path: target }, signal: controller.signal, decodedInput: decoded.input });
    await waitFor(async () => extractorsOf(target).length === 1, 'the extractor');
    // The staging folder exists once the extractor has started; the verdict never comes.
    await waitFor(async () => (await stagingLeft()).length === 1, 'the staging folder');
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort();
    await expect(restoring).rejects.toMatchObject({ code: 'ABORTED' });
    expect(await readdir(target).catch(() => [])).toEqual([]);
    expect(await stagingLeft()).toEqual([]);
    expect(extractorsOf(target)).toEqual([]);
  });
});

describe('source-directory restore in this process waits for the engine\'s verdict too (the fallback before a build)', () => {
  it('a rejected verdict leaves the target as it was and removes the staging; a late one holds the commit back', async () => {
    const root = join(work, 'tree');
    await seedTree(root);
    const { archive } = await dumpToBuffer(directorySource({ paths: [root] }));
    const { Readable } = await import('node:stream');
    const target = join(work, 'target');
    await mkdir(target);
    await writeFile(join(target, 'kept.txt'), 'was here');
    const rejected = restoreArchive(Readable.from([archive]), { kind: 'folder', path: target }, new AbortController().signal, {
      keepSpecialModes: false,
      beforeCommit: () => Promise.reject(new Error('checksum mismatch')),
    });
    await expect(rejected).rejects.toThrow(/checksum mismatch/);
    expect(await readdir(target)).toEqual(['kept.txt']);
    expect(await stagingLeft()).toEqual([]);

    let release!: () => void;
    const verdict = new Promise<void>((resolve) => (release = resolve));
    let asked = false;
    const restoring = restoreArchive(Readable.from([archive]), { kind: 'folder', path: target }, new AbortController().signal, {
      keepSpecialModes: false,
      beforeCommit: () => {
        asked = true;
        return verdict;
      },
    });
    await waitFor(async () => asked, 'the commit question');
    expect(await readdir(target)).toEqual(['kept.txt']);
    release();
    expect((await restoring).warnings).toEqual([]);
    expect((await readdir(target)).sort()).toEqual(['0-tree', 'kept.txt']);
  });
});
