import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';

/** One path of a tree as the comparison sees it. */
export interface TreeRecord {
  type: 'file' | 'directory' | 'symlink';
  mode: number;
  uid: number;
  gid: number;
  /**
   * Whole milliseconds, cut from the exact nanoseconds: `stats.mtimeMs` is a double, so a time like .823000500 reads
   * as 822.9999... on one side and 823 on the other once a restore keeps only the microseconds.
   */
  mtimeMs: number;
  size?: number;
  sha256?: string;
  target?: string;
  /** Index of the hard-link group (paths sharing an inode), so groups compare across trees. */
  linkGroup?: string;
}

/** Describes a tree by path: type, mode, mtime, content hash, symlink target and hard-link grouping. */
export async function describeTree(root: string, options: { exclude?: (path: string) => boolean } = {}): Promise<Map<string, TreeRecord>> {
  const records = new Map<string, TreeRecord>();
  const inodes = new Map<string, string>();
  const walk = async (dir: string, rel: string) => {
    for (const name of (await readdir(dir)).sort()) {
      const path = rel ? `${rel}/${name}` : name;
      if (options.exclude?.(path)) continue;
      const absolute = join(dir, name);
      const stats = await lstat(absolute, { bigint: true });
      const common = { mode: Number(stats.mode & 0o7777n), uid: Number(stats.uid), gid: Number(stats.gid), mtimeMs: Number(stats.mtimeNs / 1_000_000n) };
      if (stats.isDirectory()) {
        records.set(path, { type: 'directory', ...common });
        await walk(absolute, path);
      } else if (stats.isSymbolicLink()) {
        records.set(path, { type: 'symlink', mode: 0, uid: common.uid, gid: common.gid, mtimeMs: common.mtimeMs, target: await readlink(absolute) });
      } else {
        const key = `${stats.dev}:${stats.ino}`;
        if (stats.nlink > 1 && !inodes.has(key)) inodes.set(key, path);
        const linkGroup = stats.nlink > 1 ? inodes.get(key) : undefined;
        records.set(path, { type: 'file', ...common, size: Number(stats.size), sha256: await hashFile(absolute), ...(linkGroup ? { linkGroup } : {}) });
      }
    }
  };
  await walk(root, '');
  return records;
}

async function hashFile(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk);
  return hash.digest('hex');
}
