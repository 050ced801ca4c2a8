import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, readdir, readlink, realpath } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** Every path below `root` (relative, sorted), optionally leaving out subtrees for which `skip` is true. */
export async function listTree(root: string, skip: (absolute: string) => boolean = () => false): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    for (const name of (await readdir(dir)).sort()) {
      const absolute = join(dir, name);
      if (skip(absolute)) continue;
      found.push(relative(root, absolute));
      if ((await lstat(absolute)).isDirectory()) await walk(absolute);
    }
  };
  await walk(root);
  return found;
}

/**
 * One SHA-256 over a folder tree: every entry's path, type, mode, owner, mtime (nanoseconds, the root's own included),
 * content or link target, and which files share an inode. Two calls give the same hash only when the tree did not
 * change in any of those, which is what "a failed restore leaves the target exactly as it was" means.
 */
export async function folderTreeHash(root: string): Promise<string> {
  const hash = createHash('sha256');
  const inodes = new Map<bigint, string>();
  const describe = async (absolute: string, path: string): Promise<void> => {
    const stats = await lstat(absolute, { bigint: true });
    const common = `${path}\0${stats.mode.toString(8)}\0${stats.uid}:${stats.gid}\0${stats.mtimeNs}`;
    if (stats.isSymbolicLink()) hash.update(`link\0${common}\0${await readlink(absolute)}\n`);
    else if (stats.isDirectory()) {
      hash.update(`dir\0${common}\n`);
      for (const name of (await readdir(absolute)).sort()) await describe(join(absolute, name), path === '' ? name : `${path}/${name}`);
    } else {
      const first = inodes.get(stats.ino);
      if (first === undefined) inodes.set(stats.ino, path);
      const content = createHash('sha256');
      for await (const chunk of createReadStream(absolute)) content.update(chunk as Buffer);
      hash.update(`file\0${common}\0${stats.size}\0${content.digest('hex')}\0${first ?? ''}\n`);
    }
  };
  await describe(root, '');
  return hash.digest('hex');
}

function isInside(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

// Where a symlink leads, followed the way the kernel follows it: segment by segment from the link's real folder, each
// link met replaced by where it leads. Never by lexical normalisation, which is the mistake that lets `up/..` escape.
// Past a segment that does not exist the rest is applied lexically (the kernel would stop there; this errs outward).
async function whereLinkLeads(link: string, depth = 0): Promise<string> {
  try {
    return await realpath(link);
  } catch {
    // Dangling: walked below.
  }
  const target = await readlink(link);
  let current = target.startsWith('/') ? '/' : await realpath(dirname(link));
  let isMissing = false;
  for (const segment of target.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') {
      current = dirname(current);
      continue;
    }
    const next = join(current, segment);
    const stats = isMissing ? undefined : await lstat(next).catch(() => undefined);
    if (!stats) isMissing = true;
    current = stats?.isSymbolicLink() && depth < 40 ? await whereLinkLeads(next, depth + 1) : next;
  }
  return current;
}

/** What a restore left that it must not have: see {@link auditRestoreTarget}. */
export interface RestoreAudit {
  /** Symlinks in the target whose destination (followed all the way) lies outside it. */
  linksLeadingOutside: string[];
  /** Files in the target sharing an inode with a file of `outside`. */
  hardLinksToOutside: string[];
  /** Files and folders in the target with a setuid, setgid or sticky bit. */
  specialModes: string[];
  /** Staging leftovers (names holding `.holdfast-restore-`, `.holdfast-replaced-` or `.holdfast-copy-`) in the target or beside it. */
  stagingLeftovers: string[];
}

/**
 * Checks a restore target for escapes (issue 41): links leading out of it, hard links to files of the folders in
 * `outside`, setuid/setgid/sticky bits, and staging folders left behind. Paths created outside are found by comparing
 * {@link listTree} of the surroundings before and after; this checks what is inside.
 */
export async function auditRestoreTarget(target: string, outside: readonly string[] = []): Promise<RestoreAudit> {
  const audit: RestoreAudit = { linksLeadingOutside: [], hardLinksToOutside: [], specialModes: [], stagingLeftovers: [] };
  const root = await realpath(target).catch(() => resolve(target));
  const outsideInodes = new Set<string>();
  for (const folder of outside) {
    for (const path of await listTree(folder, (absolute) => isInside(absolute, root))) {
      const stats = await lstat(join(folder, path));
      if (stats.isFile()) outsideInodes.add(`${stats.dev}:${stats.ino}`);
    }
  }
  const isStaging = (name: string) => /\.holdfast-(restore|replaced|copy)-[0-9a-f]/.test(name);
  for (const name of await readdir(dirname(root)).catch(() => [] as string[])) if (isStaging(name)) audit.stagingLeftovers.push(join(dirname(root), name));
  const exists = await lstat(root).catch(() => undefined);
  if (!exists) return audit;
  for (const path of await listTree(root)) {
    const absolute = join(root, path);
    const stats = await lstat(absolute);
    if (isStaging(path.split(sep).pop() ?? '')) audit.stagingLeftovers.push(absolute);
    if (stats.isSymbolicLink()) {
      const leads = await whereLinkLeads(absolute);
      if (!isInside(leads, root)) audit.linksLeadingOutside.push(`${path} -> ${await readlink(absolute)}`);
    } else if ((stats.mode & 0o7000) !== 0) audit.specialModes.push(`${path} ${(stats.mode & 0o7777).toString(8)}`);
    if (stats.isFile() && outsideInodes.has(`${stats.dev}:${stats.ino}`)) audit.hardLinksToOutside.push(path);
  }
  return audit;
}
