// Issue 41: the recovery kit applies the same containment rule as Holdfast's own restores (its own copy,
// @holdfast/recovery-kit kit/containment.mjs). Hostile archives, plain and encrypted, alone and as the incremental run of a chain:
// relative symlink chains of depth 2-6 with a folder and a hard link through them, an absolute link, setuid/setgid
// members. Nothing may be created outside the output folder, no link may lead out of it, no file may share an inode
// with an outside file, no special bit may be set; every refused member is named and the kit exits 7, not 0.
import { randomBytes } from 'node:crypto';
import { lstat, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { ArchiveIndex, ArchiveWriter, ArchiveWriterOptions } from '@holdfast/archive';
import { auditRestoreTarget, listTree } from '@holdfast/testkit';
import { useRecoveryKit, writeKitArchive } from './recovery-kit-support.js';

const key = randomBytes(32);
const kit = useRecoveryKit(key);
const extract = (cwd: string, args: string[]) => kit.extract(cwd, [...kit.keyArgs(), ...args]);

/** work/l1/.../l5 with outside-secret.txt at every level; the archives and the output folder live in l5. */
async function workTree(): Promise<string> {
  let level = await kit.tempDir();
  for (const name of ['l1', 'l2', 'l3', 'l4', 'l5']) {
    await writeFile(join(level, 'outside-secret.txt'), 'secret\n');
    level = join(level, name);
    await mkdir(level);
  }
  await writeFile(join(level, 'outside-secret.txt'), 'secret\n');
  return level;
}

function writeArchive(file: string, isEncrypted: boolean, options: ArchiveWriterOptions, fill: (writer: ArchiveWriter) => Promise<unknown>): Promise<ArchiveIndex> {
  return writeKitArchive(key, { file, isEncrypted, options, hasIndexSidecar: true }, fill);
}

const text = (writer: ArchiveWriter, path: string, body: string, mode = 0o644) => writer.addFile({ path, size: Buffer.byteLength(body), mode }, Readable.from([Buffer.from(body)]));

/** Adds the hostile members of a chain of `depth`; returns the names the kit must refuse or report. */
async function addHostileChain(writer: ArchiveWriter, depth: number, outsideFile: string): Promise<string[]> {
  const links: [string, string][] = [['a/up', '..']];
  for (let step = 2; step <= depth; step++) links.push([`a/up${step}`, `up${step === 2 ? '' : step - 1}/..`]);
  const last = `a/up${depth}`;
  await writer.addDirectory({ path: 'a' });
  for (const [path, target] of links) await writer.addSymlink({ path }, target);
  await text(writer, `${last}/made-by-restore/evil.txt`, 'evil');
  await text(writer, `${last}/outside-secret.txt`, 'planted');
  await writer.addHardLink({ path: 'hl3' }, `${last}/outside-secret.txt`);
  await writer.addSymlink({ path: 'abs-link' }, outsideFile);
  await text(writer, 'suid', '#!/bin/sh\n', 0o4755);
  await text(writer, 'sgid', '#!/bin/sh\n', 0o2755);
  await text(writer, 'fine.txt', 'fine');
  return [`${last}/made-by-restore/evil.txt`, `${last}/outside-secret.txt`, 'hl3', 'abs-link', 'suid', 'sgid', ...links.slice(1).map(([path]) => path)];
}

async function expectContained(folder: string, archive: string, named: string[]): Promise<void> {
  const root = join(folder, '..', '..', '..', '..', '..');
  const isOutput = (absolute: string) => absolute === join(folder, 'out');
  const before = await listTree(root, isOutput);
  const result = await extract(folder, [archive, 'out']);
  expect(await listTree(root, isOutput), 'paths created outside the output folder').toEqual(before);
  expect(await auditRestoreTarget(join(folder, 'out'), [root])).toEqual({ linksLeadingOutside: [], hardLinksToOutside: [], specialModes: [], stagingLeftovers: [] });
  expect(result.code, result.stderr).toBe(7);
  for (const name of named) expect(result.stderr, name).toContain(`holdfast-decrypt: ${name}: `);
  expect(await readFile(join(folder, 'out', 'fine.txt'), 'utf8')).toBe('fine');
}

describe('recovery kit: hostile archives (issue 41)', () => {
  for (const depth of [2, 3, 4, 5, 6]) {
    it(`contains a depth-${depth} symlink chain in a plain archive`, async () => {
      const folder = await workTree();
      let named: string[] = [];
      await writeArchive(join(folder, 'hostile.hfa'), false, { archiveName: 'hostile.hfa' }, async (writer) => {
        named = await addHostileChain(writer, depth, join(folder, 'outside-secret.txt'));
      });
      await expectContained(folder, 'hostile.hfa', named);
    });

    it(`contains a depth-${depth} symlink chain added by the encrypted incremental run of a chain`, async () => {
      const folder = await workTree();
      const base = await writeArchive(join(folder, 'run-0.hfa.enc'), true, { archiveName: 'run-0.hfa.enc', chain: { id: 'c', sequence: 0, baseArchives: [] } }, (writer) =>
        text(writer, 'kept.txt', 'kept'),
      );
      let named: string[] = [];
      await writeArchive(
        join(folder, 'run-1.hfa.enc'),
        true,
        { archiveName: 'run-1.hfa.enc', chain: { id: 'c', sequence: 1, baseArchives: ['run-0.hfa.enc'] } },
        async (writer) => {
          await writer.addReference(base.entries[0]!, 'run-0.hfa.enc');
          named = await addHostileChain(writer, depth, join(folder, 'outside-secret.txt'));
        },
      );
      await expectContained(folder, 'run-1.hfa.enc', named);
      expect(await readFile(join(folder, 'out', 'kept.txt'), 'utf8')).toBe('kept');
    });
  }

  it('keeps setuid and setgid bits with --keep-special-modes (as root, owners too), and refuses the option otherwise', async () => {
    const folder = await workTree();
    await writeArchive(join(folder, 'modes.hfa'), false, { archiveName: 'modes.hfa' }, async (writer) => {
      await writer.addFile({ path: 'suid', size: 2, mode: 0o4755, uid: 1234, gid: 2345 }, Readable.from([Buffer.from('#!')]));
    });
    const result = await extract(folder, ['--keep-special-modes', 'modes.hfa', 'out']);
    if (process.getuid?.() === 0) {
      expect(result.code, result.stderr).toBe(0);
      expect(await lstat(join(folder, 'out', 'suid'))).toMatchObject({ uid: 1234, gid: 2345 });
      expect((await lstat(join(folder, 'out', 'suid'))).mode & 0o7777).toBe(0o4755);
    } else {
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('--keep-special-modes');
    }
  });
});
