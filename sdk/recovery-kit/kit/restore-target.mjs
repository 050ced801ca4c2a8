// Writes a snapshot's entries into a folder for the recovery kit under the containment rule (containment.mjs): no
// path may leave the folder, nothing is written through a symlink, no symlink left leads out of it, setuid/setgid/
// sticky bits only with --keep-special-modes; refused members are named in `warnings`. Each file's content is checked
// against the index before it counts as restored.
import { createHash } from 'node:crypto';
import { constants as fs } from 'node:fs';
import { chmod, chown, lchown, link, lstat, lutimes, mkdir, open, symlink, utimes } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { Containment } from './containment.mjs';
import { EXIT, KitError } from './hfenc.mjs';

const damaged = (message) => new KitError(EXIT.damaged, message);

/**
 * An index path as a list of safe segments. Absolute paths, ".." and NUL are refused rather than cleaned up: an
 * index holding them was made to escape the output folder.
 */
export function safeSegments(path) {
  if (path.startsWith('/') || path.includes('\0')) throw damaged(`refusing the unsafe path ${JSON.stringify(path)} in the index`);
  const segments = path.split('/').filter((segment) => segment !== '' && segment !== '.');
  if (segments.includes('..') || segments.length === 0) throw damaged(`refusing the unsafe path ${JSON.stringify(path)} in the index`);
  return segments;
}

/** Hashes and counts content on its way to disk. */
class ContentCheck extends Transform {
  hash = createHash('sha256');
  size = 0;

  _transform(chunk, _encoding, callback) {
    this.hash.update(chunk);
    this.size += chunk.length;
    callback(null, chunk);
  }
}

/**
 * The output folder. Files and directories are written as they come; hard links and symlinks are created at the
 * end (symlinks last, once every one of them was resolved through the others); directory modes and mtimes are
 * applied last of all, deepest first, because creating entries inside a directory changes its mtime.
 */
export class RestoreTarget {
  constructor(root, { keepSpecialModes = false } = {}) {
    this.root = root;
    this.isRoot = process.getuid?.() === 0;
    // Special bits only together with the owners, which only root restores.
    this.containment = new Containment({ keepSpecialModes: keepSpecialModes && this.isRoot });
    this.realDirectories = new Set(['']);
    this.directories = [];
    this.hardlinks = [];
    this.files = new Set();
    this.warnings = [];
    this.counts = { files: 0, directories: 0, symlinks: 0, hardlinks: 0, dumps: 0 };
  }

  async directory(entry) {
    const admitted = this.admit(entry, 'directory');
    if (!admitted) return;
    await this.ensureDirectory(admitted.path);
    this.directories.push({ ...entry, path: admitted.path, mode: admitted.mode });
    this.counts.directories += 1;
  }

  /**
   * Writes a file from its decoded content. `decodeInto(sink)` pipes the content through `sink`; the written bytes
   * are then checked against the entry's size and SHA-256.
   */
  async file(entry, decodeInto) {
    const admitted = this.admit(entry, 'file');
    if (!admitted) return;
    const { path } = admitted;
    const absolute = await this.newLeaf(path);
    const handle = await open(absolute, fs.O_WRONLY | fs.O_CREAT | fs.O_EXCL | fs.O_NOFOLLOW, 0o600);
    const check = new ContentCheck();
    await decodeInto(check, handle.createWriteStream());
    const digest = check.hash.digest('hex');
    if (check.size !== entry.size || digest !== entry.sha256) {
      throw damaged(`"${entry.path}" came out as ${check.size} bytes with SHA-256 ${digest}; the index says ${entry.size} bytes, ${entry.sha256}`);
    }
    // Owner before mode: chown clears setuid/setgid bits.
    if (this.isRoot) await chown(absolute, entry.uid, entry.gid);
    await chmod(absolute, admitted.mode);
    await setTimes(utimes, absolute, entry.mtime);
    this.files.add(path);
    this.counts[entry.kind === 'database-dump' ? 'dumps' : 'files'] += 1;
  }

  symlink(entry) {
    this.admit(entry, 'symlink');
  }

  hardlink(entry) {
    const admitted = this.admit({ ...entry, target: safeSegments(entry.target).join('/') }, 'hardlink');
    if (admitted) this.hardlinks.push({ ...entry, path: admitted.path, target: admitted.linkTarget });
  }

  async finish() {
    for (const entry of this.hardlinks) {
      // Only a file this run restored may be linked: never whatever else happens to sit at that path.
      if (!this.files.has(entry.target)) {
        this.warnings.push(`${entry.path}: hard link refused, its link target "${entry.target}" was not restored as a file`);
        continue;
      }
      await link(join(this.root, entry.target), await this.newLeaf(entry.path));
      this.counts.hardlinks += 1;
    }
    const { accepted, refused } = this.containment.settle();
    for (const { path, reason } of refused) this.warnings.push(`${path}: symlink refused, ${reason}`);
    for (const { path, target, payload: entry } of accepted) {
      const absolute = await this.newLeaf(path);
      await symlink(target, absolute);
      if (this.isRoot) await lchown(absolute, entry.uid, entry.gid);
      await setTimes(lutimes, absolute, entry.mtime);
      this.counts.symlinks += 1;
    }
    const deepestFirst = [...this.directories].sort((a, b) => b.path.split('/').length - a.path.split('/').length);
    for (const entry of deepestFirst) {
      const absolute = join(this.root, entry.path);
      if (this.isRoot) await chown(absolute, entry.uid, entry.gid);
      await chmod(absolute, entry.mode);
      await setTimes(utimes, absolute, entry.mtime);
    }
    return this.counts;
  }

  // The containment rule's verdict for an entry; a refused one is named in the warnings and undefined returned.
  admit(entry, kind) {
    const path = safeSegments(entry.path).join('/');
    const verdict = this.containment.admit({ path, kind, mode: entry.mode, target: entry.target, payload: { ...entry, path } });
    if (verdict.refused) {
      const what = kind === 'symlink' ? 'symlink refused' : kind === 'hardlink' ? 'hard link refused' : 'refused';
      this.warnings.push(`${path}: ${what}, ${verdict.refused}`);
      return undefined;
    }
    if (verdict.note) this.warnings.push(`${path}: ${verdict.note}`);
    return verdict;
  }

  // Every directory of `path` exists as a real directory inside the root, never a symlink or a file.
  async ensureDirectory(path) {
    if (this.realDirectories.has(path)) return;
    const parent = dirname(path);
    await this.ensureDirectory(parent === '.' ? '' : parent);
    const absolute = join(this.root, path);
    await mkdir(absolute).catch((error) => {
      if (error.code !== 'EEXIST') throw error;
    });
    if (!(await lstat(absolute)).isDirectory()) throw damaged(`"${path}" is not a directory in the output (a symlink or file is in the way)`);
    this.realDirectories.add(path);
  }

  // The output folder starts empty, so anything already at a leaf's path means the index names that path twice, or
  // names it both as a leaf and as a folder of another entry (how a symlink would be planted and then written through).
  async newLeaf(path) {
    const parent = dirname(path);
    await this.ensureDirectory(parent === '.' ? '' : parent);
    const absolute = join(this.root, path);
    if (await lstat(absolute).catch(() => undefined)) throw damaged(`refusing "${path}": the index names that path twice, or as a folder of another entry`);
    return absolute;
  }
}

// pax mtimes are decimal seconds; utimes takes seconds as a number and keeps about a microsecond of them.
// The stored time cut to its microsecond (what utimes keeps), passed as a decimal string nudged half a microsecond
// away from zero: libuv truncates a double's fraction to whole microseconds (a time just below one in binary would
// lose it), and Node replaces a negative number (any time before 1970) by the current time, but takes a string as is.
function setTimes(setter, path, mtime) {
  const match = /^(-?)(\d+)(?:\.(\d{1,9}))?$/.exec(String(mtime));
  if (!match) throw new Error(`mtime "${mtime}" is not decimal seconds`);
  const magnitude = BigInt(match[2]) * 1_000_000_000n + BigInt((match[3] ?? '').padEnd(9, '0'));
  const nanoseconds = match[1] ? -magnitude : magnitude;
  let microseconds = nanoseconds / 1000n;
  if (nanoseconds < 0n && nanoseconds % 1000n !== 0n) microseconds -= 1n;
  const nudged = microseconds * 1000n + (microseconds < 0n ? -500n : 500n);
  const sign = nudged < 0n ? '-' : '';
  const abs = nudged < 0n ? -nudged : nudged;
  const seconds = `${sign}${abs / 1_000_000_000n}.${(abs % 1_000_000_000n).toString().padStart(9, '0')}`;
  return setter(path, seconds, seconds);
}
