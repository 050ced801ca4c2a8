import { createWriteStream } from 'node:fs';
import { createHash } from 'node:crypto';
import { chmod, lstat, mkdir, readdir, readFile, readlink, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { deterministicStream } from '@holdfast/testkit';

/** Seeds a volume folder: nested dirs, unicode names, a symlink, an empty file and ~2 MiB so an abort lands mid-dump. */
export async function seedVolumeFolder(dir: string): Promise<void> {
  await mkdir(join(dir, 'conf', 'deep'), { recursive: true });
  await writeFile(join(dir, 'conf', 'app.ini'), '[db]\nhost = db\n');
  await writeFile(join(dir, 'conf', 'deep', 'naïve 東京.txt'), 'こんにちは\n');
  await writeFile(join(dir, 'empty'), '');
  await chmod(join(dir, 'conf', 'app.ini'), 0o640);
  await symlink('conf/app.ini', join(dir, 'current.ini'));
  await pipeline(deterministicStream(2 * 1024 * 1024 + 17, { seed: 'volume' }), createWriteStream(join(dir, 'data.bin')));
}

/** Reads a folder as `relative path -> content` (symlinks as `-> target`), for comparisons. */
export async function describeFolder(dir: string, prefix = ''): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of (await readdir(dir)).sort()) {
    const full = join(dir, name);
    const info = await lstat(full);
    const key = `${prefix}${name}`;
    if (info.isDirectory()) Object.assign(out, { [`${key}/`]: 'dir' }, await describeFolder(full, `${key}/`));
    else if (info.isSymbolicLink()) out[key] = `-> ${await readlink(full)}`;
    else out[key] = `${info.size}:${createHash('sha256').update(await readFile(full)).digest('hex')}:${(info.mode & 0o777).toString(8)}`;
  }
  return out;
}
