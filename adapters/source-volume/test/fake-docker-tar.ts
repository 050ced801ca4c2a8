/** Tar helpers of the FAKE Docker Engine API: folders packed and extracted the way the archive endpoints do. */
import { createReadStream } from 'node:fs';
import { lstat, mkdir, readdir, readlink, rm, symlink, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type tar from 'tar-stream';

/** Packs a folder as `<base>/...` members, like the Engine's archive endpoint does. */
export async function packFolder(pack: tar.Pack, dir: string, base: string): Promise<void> {
  const info = await lstat(dir);
  await new Promise<void>((resolve, reject) => pack.entry({ name: `${base}/`, type: 'directory', mode: info.mode & 0o7777, mtime: info.mtime }, (e) => (e ? reject(e) : resolve())));
  for (const name of (await readdir(dir)).sort()) {
    const full = join(dir, name);
    const entry = await lstat(full);
    const member = `${base}/${name}`;
    if (entry.isDirectory()) await packFolder(pack, full, member);
    else if (entry.isSymbolicLink()) {
      const linkname = await readlink(full);
      await new Promise<void>((resolve, reject) => pack.entry({ name: member, type: 'symlink', linkname, mode: 0o777 }, (e) => (e ? reject(e) : resolve())));
    } else {
      const sink = pack.entry({ name: member, size: entry.size, mode: entry.mode & 0o7777, mtime: entry.mtime });
      await pipeline(createReadStream(full), sink);
    }
  }
}

/** Writes one member below `dir`, refusing names that leave it (as the Engine does). */
export async function writeEntry(dir: string, header: tar.Headers, stream: NodeJS.ReadableStream): Promise<void> {
  const name = posix.normalize(header.name);
  if (name.startsWith('/') || name.startsWith('..')) throw new Error(`member ${header.name} leaves the target`);
  const full = join(dir, name);
  if (header.type === 'directory') {
    await mkdir(full, { recursive: true, mode: header.mode });
    stream.resume();
    return;
  }
  await mkdir(join(full, '..'), { recursive: true });
  if (header.type === 'symlink') {
    await rm(full, { force: true });
    await symlink(header.linkname ?? '', full);
    stream.resume();
    return;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  await writeFile(full, Buffer.concat(chunks), { mode: header.mode });
}
