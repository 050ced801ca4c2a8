import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, lstat, mkdir, mkdtemp, readdir, readlink, rm, symlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { deterministicStream } from '@holdfast/testkit';
import { createWriteStream } from 'node:fs';

/** One node of a tree as compared after a restore. */
export interface TreeNode {
  type: 'file' | 'directory' | 'symlink';
  mode: number;
  sha256?: string;
  size?: number;
  link?: string;
  mtimeSeconds?: number;
}

/** A fresh temp directory. */
export function tempDir(label: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `holdfast-dir-${label}-`));
}

/** Removes temp directories. */
export async function removeAll(...paths: (string | undefined)[]): Promise<void> {
  await Promise.all(paths.filter((p): p is string => !!p).map((p) => rm(p, { recursive: true, force: true })));
}

/**
 * Seeds the tree the brief asks for: nested folders, unicode and space names, a relative symlink, an empty folder,
 * a 0-byte file, a few-MiB file, unusual modes and a fixed old mtime.
 */
export async function seedTree(root: string): Promise<void> {
  await mkdir(join(root, 'naïve', 'deep', 'deeper'), { recursive: true });
  await writeFile(join(root, 'naïve', '東京.txt'), 'こんにちは holdfast\n');
  await writeFile(join(root, 'naïve', 'deep', 'deeper', 'note with spaces.md'), '# nested\n');
  await mkdir(join(root, 'empty dir'));
  await writeFile(join(root, 'zero.bin'), '');
  await pipeline(deterministicStream(3 * 1024 * 1024 + 123, { seed: 'big' }), createWriteStream(join(root, 'big.bin')));
  await writeFile(join(root, 'script.sh'), '#!/bin/sh\necho hi\n');
  await chmod(join(root, 'script.sh'), 0o750);
  await writeFile(join(root, 'secret.txt'), 'private');
  await chmod(join(root, 'secret.txt'), 0o600);
  await symlink('naïve/東京.txt', join(root, 'link-to-tokyo'));
  await writeFile(join(root, `${'long-name-'.repeat(12)}.txt`), 'a name longer than 100 bytes');
  const old = new Date('2020-02-02T02:02:02Z');
  await utimes(join(root, 'zero.bin'), old, old);
  await utimes(join(root, 'naïve', 'deep'), old, old);
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Every node below `root` by relative path: type, mode, content hash, link target and mtime (seconds). */
export async function describeTree(root: string): Promise<Record<string, TreeNode>> {
  const result: Record<string, TreeNode> = {};
  async function visit(directory: string, prefix: string): Promise<void> {
    for (const name of (await readdir(directory)).sort()) {
      const path = join(directory, name);
      const key = prefix + name;
      const info = await lstat(path);
      const mode = info.mode & 0o7777;
      const mtimeSeconds = Math.floor(info.mtimeMs / 1000);
      if (info.isSymbolicLink()) result[key] = { type: 'symlink', mode: 0, link: await readlink(path) };
      else if (info.isDirectory()) {
        result[key] = { type: 'directory', mode, mtimeSeconds };
        await visit(path, `${key}/`);
      } else result[key] = { type: 'file', mode, size: info.size, sha256: await sha256Of(path), mtimeSeconds };
    }
  }
  await visit(root, '');
  return result;
}
