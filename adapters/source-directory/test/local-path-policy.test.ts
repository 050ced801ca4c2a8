// Regression tests of issue 10.1 in the adapter: with the host's local path rule in its context, a directory source
// refuses at use time to read the protected data directory and to restore outside the allowed roots, whatever
// config was saved.
import { mkdir, readdir, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLocalPathPolicy, type SourceAdapter } from '@holdfast/sdk';
import { createAdapterInstance } from '@holdfast/testkit';
import definition from '../src/index.js';
import { craftTar, dumpToBuffer } from './helpers.js';
import { removeAll, tempDir } from './tree.js';

let work: string;
let dataDir: string;
let allowed: string;
const signal = () => new AbortController().signal;

beforeEach(async () => {
  work = await tempDir('policy');
  dataDir = join(work, 'data');
  allowed = join(work, 'restores');
  await mkdir(dataDir);
  await mkdir(allowed);
  await writeFile(join(dataDir, 'system.key'), 'k'.repeat(64));
});
afterEach(() => removeAll(work));

function sourceWith(paths: string[], isProtectedSourceAllowed = false, followSymlinks = false): SourceAdapter {
  const localPaths = createLocalPathPolicy({ allowedRoots: [allowed], protectedPaths: [dataDir], isProtectedSourceAllowed });
  return createAdapterInstance<SourceAdapter>(definition, { paths, followSymlinks }, { localPaths });
}

describe('regression (issue 10.1): source-directory applies the local path rule at use time', () => {
  it('fails check and dump of the data directory or a folder holding it, unless the operator opted in', async () => {
    for (const path of [dataDir, work]) {
      const check = await sourceWith([path]).check();
      expect(check.ok).toBe(false);
      expect(check.message).toContain('HOLDFAST_ALLOW_DATA_DIR_SOURCE');
      await expect(sourceWith([path]).dump({ databases: [], signal: signal() })).rejects.toMatchObject({ code: 'CONFIG' });
    }
    expect((await sourceWith([dataDir], true).check()).ok).toBe(true);
  });

  it('restores only into a folder inside the allowed roots', async () => {
    const outside = join(work, 'elsewhere');
    const refused = sourceWith([join(work, 'docs')]).restore(await craftTar([{ name: '0-docs/a.txt', body: 'a' }]), { target: { path: outside }, signal: signal() });
    await expect(refused).rejects.toMatchObject({ code: 'CONFIG' });
    await expect(readdir(outside)).rejects.toMatchObject({ code: 'ENOENT' });
    const intoData = sourceWith([join(work, 'docs')]).restore(await craftTar([{ name: 'system.key', body: 'x' }]), { target: { path: dataDir }, signal: signal() });
    await expect(intoData).rejects.toMatchObject({ code: 'CONFIG' });
    const fine = await sourceWith([join(work, 'docs')]).restore(await craftTar([{ name: 'a.txt', body: 'a' }]), { target: { path: join(allowed, 'run-1') }, signal: signal() });
    expect(fine).toBeDefined();
    expect(await readdir(join(allowed, 'run-1'))).toContain('a.txt');
  });

  it('does not follow a symlink into the data directory when followSymlinks is on', async () => {
    const docs = join(work, 'docs');
    await mkdir(docs);
    await writeFile(join(docs, 'a.txt'), 'a');
    await symlink(dataDir, join(docs, 'shortcut'));
    const { archive, stats } = await dumpToBuffer(sourceWith([docs], false, true));
    expect(archive.includes(Buffer.from('k'.repeat(64)))).toBe(false);
    expect(archive.includes(Buffer.from('a.txt'))).toBe(true);
    expect(JSON.stringify(stats)).toContain('symlink not followed');
  });
});
