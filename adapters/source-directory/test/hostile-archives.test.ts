// Issue 41: hand-made hostile archives against every restore path of the directory source (plain tar, seekable
// archive, incremental chain), run as root so setuid bits and hard links are real. Each restore goes into a target
// nested six folders deep in a work folder holding "outside-secret.txt" at every level; afterwards nothing may have
// been created outside the target, no link may lead out of it, no file may share an inode with an outside file, no
// setuid/setgid/sticky bit may be set, every refused member must be named in the warnings (so the run ends Partial,
// never Success), and no staging folder may be left.
import { createReadStream } from 'node:fs';
import { lstat, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditRestoreTarget, listTree } from '@holdfast/testkit';
import { createArchiveWriter, readIndex, resolveSnapshot, type ArchiveIndex, type ArchiveRangeReader, type ArchiveWriter, type RestoreResult } from '@holdfast/sdk';
import { directorySource } from './helpers.js';
import { removeAll, tempDir } from './tree.js';

const signal = () => new AbortController().signal;
const LEVELS = ['l1', 'l2', 'l3', 'l4', 'l5'];
let work: string;
let target: string;

beforeEach(async () => {
  work = await tempDir('hostile');
  // work/l1/l2/l3/l4/l5/target: a chain of depth d (up to 6) resolves to a level inside work, never to / or /tmp.
  let level = work;
  for (const name of LEVELS) {
    await writeFile(join(level, 'outside-secret.txt'), `secret of ${level}\n`);
    level = join(level, name);
    await mkdir(level);
  }
  await writeFile(join(level, 'outside-secret.txt'), `secret of ${level}\n`);
  target = join(level, 'target');
});
afterEach(() => removeAll(work));

const outsideNow = () => listTree(work, (absolute) => absolute === target);

/** The member names that a relative-symlink chain of `depth` uses, and what it tries through its last link. */
function chain(depth: number): { links: [string, string][]; last: string } {
  const links: [string, string][] = [['a/up', '..']];
  for (let step = 2; step <= depth; step++) links.push([`a/up${step}`, `up${step === 2 ? '' : step - 1}/..`]);
  return { links, last: depth === 1 ? 'a/up' : `a/up${depth}` };
}

interface TarMember {
  name: string;
  type?: tar.Headers['type'];
  linkname?: string;
  mode?: number;
  body?: string;
}

/** A tar of hand-written headers (devices, modes, any names), read while written. */
async function hostileTar(members: TarMember[]): Promise<Readable> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const read = (async () => {
    for await (const chunk of pack as AsyncIterable<Buffer>) chunks.push(chunk);
  })();
  for (const member of members) {
    const type = member.type ?? 'file';
    const header: tar.Headers = { name: member.name, type, mode: member.mode ?? 0o644, mtime: new Date(1_700_000_000_000), uid: 0, gid: 0 };
    if (member.linkname !== undefined) header.linkname = member.linkname;
    if (type === 'character-device' || type === 'block-device') Object.assign(header, { devmajor: 1, devminor: 3 });
    await new Promise<void>((resolve, reject) => pack.entry(header, type === 'file' ? (member.body ?? 'x') : undefined, (error) => (error ? reject(error) : resolve())));
  }
  pack.finalize();
  await read;
  return Readable.from([Buffer.concat(chunks)]);
}

/** Restores, then checks the surroundings and the target; returns the warnings for the caller's assertions. */
async function expectContained(restore: () => Promise<RestoreResult | undefined>): Promise<string[]> {
  const before = await outsideNow();
  const result = await restore();
  expect(await outsideNow(), 'paths created outside the target').toEqual(before);
  expect(await auditRestoreTarget(target, [work])).toEqual({ linksLeadingOutside: [], hardLinksToOutside: [], specialModes: [], stagingLeftovers: [] });
  const warnings = result?.warnings ?? [];
  // Refusals are warnings: the engine ends a run with warnings Partial, never Success.
  expect(warnings.length).toBeGreaterThan(0);
  return warnings;
}

function expectNamed(warnings: string[], names: string[]): void {
  for (const name of names) expect(warnings.some((warning) => warning.startsWith(`${name}: `)), `${name} in ${JSON.stringify(warnings)}`).toBe(true);
}

const restoreTar = (members: TarMember[]) => async () => directorySource({ paths: ['/unused'] }).restore(await hostileTar(members), { target: { path: target }, signal: signal() });

describe('hostile plain tar archives (issue 41)', () => {
  for (const depth of [2, 3, 4, 5, 6]) {
    it(`contains a chain of relative symlinks of depth ${depth}, a folder written through it and a hard link through it`, async () => {
      const { links, last } = chain(depth);
      const warnings = await expectContained(
        restoreTar([
          { name: 'a/', type: 'directory' },
          ...links.map(([name, linkname]) => ({ name, type: 'symlink' as const, linkname })),
          { name: `${last}/made-by-restore/evil.txt`, body: 'evil' },
          { name: 'hl3', type: 'link', linkname: `${last}/outside-secret.txt` },
          { name: 'fine.txt', body: 'fine' },
        ]),
      );
      expectNamed(warnings, [`${last}/made-by-restore/evil.txt`, 'hl3', ...links.slice(1).map(([name]) => name)]);
      expect(await readFile(join(target, 'fine.txt'), 'utf8')).toBe('fine');
      // The first link resolves to the target itself: harmless, kept.
      expect(warnings.some((warning) => warning.startsWith('a/up: '))).toBe(false);
    });
  }

  it('contains ../ and absolute names, symlink-then-file, hard links out, devices, FIFOs, loops and special bits', async () => {
    const secret = join(work, 'outside-secret.txt');
    const warnings = await expectContained(
      restoreTar([
        { name: '../escaped.txt', body: 'x' },
        { name: join(work, 'absolute.txt'), body: 'x' },
        { name: 'ok/../../../climbed.txt', body: 'x' },
        { name: 'to-work', type: 'symlink', linkname: work },
        { name: 'to-work/planted.txt', body: 'x' },
        { name: 'rel-out', type: 'symlink', linkname: '../../x' },
        { name: 'rel-out/planted.txt', body: 'x' },
        { name: 'hard-abs', type: 'link', linkname: secret },
        { name: 'hard-rel', type: 'link', linkname: '../outside-secret.txt' },
        { name: 'char', type: 'character-device' },
        { name: 'block', type: 'block-device' },
        { name: 'pipe', type: 'fifo' },
        { name: 'loop1', type: 'symlink', linkname: 'loop2' },
        { name: 'loop2', type: 'symlink', linkname: 'loop1' },
        { name: 'root-link', type: 'symlink', linkname: '/' },
        { name: 'via-root', type: 'symlink', linkname: 'root-link/etc' },
        { name: 'out-link', type: 'symlink', linkname: '../..' },
        { name: 'hard-to-out-link', type: 'link', linkname: 'out-link' },
        { name: 'suid', mode: 0o4755, body: '#!/bin/sh\n' },
        { name: 'sgid', mode: 0o2755, body: '#!/bin/sh\n' },
        { name: 'sticky/', type: 'directory', mode: 0o1777 },
        { name: 'shared/', type: 'directory', mode: 0o2775 },
        { name: 'inside-link', type: 'symlink', linkname: 'suid' },
      ]),
    );
    expectNamed(warnings, [
      '../escaped.txt',
      join(work, 'absolute.txt'),
      'ok/../../../climbed.txt',
      'to-work',
      'to-work/planted.txt',
      'rel-out',
      'rel-out/planted.txt',
      'hard-abs',
      'hard-rel',
      'char',
      'block',
      'pipe',
      'loop1',
      'loop2',
      'root-link',
      'via-root',
      'out-link',
      'hard-to-out-link',
      'suid',
      'sgid',
      'sticky/',
      'shared/',
    ]);
    expect(warnings).toContain('suid: restored without its setuid bit');
    expect(warnings).toContain('sticky/: restored without its sticky bit');
    expect(await readFile(join(target, 'inside-link'), 'utf8')).toBe('#!/bin/sh\n');
  });
});

/** Writes a seekable archive to `work/<name>` and returns its index. */
async function seekable(name: string, fill: (writer: ArchiveWriter) => Promise<unknown>, chainInfo: { id: string; sequence: number; baseArchives: string[] } | null = null): Promise<ArchiveIndex> {
  const writer = createArchiveWriter({ archiveName: name, chain: chainInfo });
  const chunks: Buffer[] = [];
  writer.on('data', (chunk: Buffer) => chunks.push(chunk));
  await fill(writer);
  const result = await writer.finish();
  await writeFile(join(work, name), Buffer.concat(chunks));
  return readIndex({ sidecar: Buffer.concat([...result.indexFile.chunks()]) });
}

const rangeReaderFor = (name: string): ArchiveRangeReader => async (start, end) => createReadStream(join(work, name), { start, end });
const file = (writer: ArchiveWriter, path: string, body: string, mode = 0o644) => writer.addFile({ path, size: Buffer.byteLength(body), mode }, Readable.from([Buffer.from(body)]));

async function restoreSnapshotOf(indexes: ArchiveIndex[], targetOptions: Record<string, unknown> = {}): Promise<RestoreResult | undefined> {
  const snapshot = resolveSnapshot(indexes);
  return directorySource({ paths: ['/unused'] }).restoreArchive?.({ snapshot, rangeReaderFor }, { target: { path: target, ...targetOptions }, signal: signal() });
}

/** The hostile members of a chain of `depth`, written into a seekable archive (the writer takes any symlink target). */
async function addHostileChain(writer: ArchiveWriter, depth: number): Promise<string[]> {
  const { links, last } = chain(depth);
  await writer.addDirectory({ path: 'a' });
  for (const [path, linkname] of links) await writer.addSymlink({ path }, linkname);
  await file(writer, `${last}/made-by-restore/evil.txt`, 'evil');
  await file(writer, `${last}/outside-secret.txt`, 'planted');
  await writer.addHardLink({ path: 'hl3' }, `${last}/outside-secret.txt`);
  await writer.addSymlink({ path: 'abs-link' }, join(work, 'outside-secret.txt'));
  await file(writer, 'suid', '#!/bin/sh\n', 0o4755);
  await file(writer, 'sgid', '#!/bin/sh\n', 0o2755);
  return [`${last}/made-by-restore/evil.txt`, `${last}/outside-secret.txt`, 'hl3', 'abs-link', 'suid', 'sgid', ...links.slice(1).map(([name]) => name)];
}

describe('hostile seekable archives and incremental chains (issue 41)', () => {
  for (const depth of [2, 3, 4, 5, 6]) {
    it(`contains a symlink chain of depth ${depth} in one seekable archive`, async () => {
      let named: string[] = [];
      const index = await seekable('hostile.hfa', async (writer) => {
        named = await addHostileChain(writer, depth);
        await file(writer, 'fine.txt', 'fine');
      });
      const warnings = await expectContained(() => restoreSnapshotOf([index]));
      expectNamed(warnings, named);
      expect(await readFile(join(target, 'fine.txt'), 'utf8')).toBe('fine');
    });

    it(`contains a symlink chain of depth ${depth} added by the incremental run of a chain`, async () => {
      const base = await seekable('run-0.hfa', (writer) => file(writer, 'kept.txt', 'from the full backup'), { id: 'c1', sequence: 0, baseArchives: [] });
      let named: string[] = [];
      const incremental = await seekable(
        'run-1.hfa',
        async (writer) => {
          await writer.addReference(base.entries.find((entry) => entry.path === 'kept.txt')!, 'run-0.hfa');
          named = await addHostileChain(writer, depth);
        },
        { id: 'c1', sequence: 1, baseArchives: ['run-0.hfa'] },
      );
      const warnings = await expectContained(() => restoreSnapshotOf([base, incremental]));
      expectNamed(warnings, named);
      expect(await readFile(join(target, 'kept.txt'), 'utf8')).toBe('from the full backup');
    });
  }

  it('keeps setuid and setgid bits only when asked, and then with the archived owners', async () => {
    const index = await seekable('modes.hfa', async (writer) => {
      await writer.addFile({ path: 'suid', size: 2, mode: 0o4755, uid: 1234, gid: 2345 }, Readable.from([Buffer.from('#!')]));
      await writer.addFile({ path: 'sgid', size: 2, mode: 0o2750, uid: 1234, gid: 2345 }, Readable.from([Buffer.from('#!')]));
    });
    const dropped = await restoreSnapshotOf([index]);
    expect(dropped?.warnings).toEqual(['suid: restored without its setuid bit', 'sgid: restored without its setgid bit']);
    const kept = await restoreSnapshotOf([index], { keepSpecialModes: true });
    expect(kept?.warnings).toEqual([]);
    expect(await lstat(join(target, 'suid'))).toMatchObject({ uid: 1234, gid: 2345 });
    expect((await lstat(join(target, 'suid'))).mode & 0o7777).toBe(0o4755);
    expect((await lstat(join(target, 'sgid'))).mode & 0o7777).toBe(0o2750);
  });
});
