// Unpacks a PostgreSQL base backup's tar (what `pg_basebackup -Ft -D -` writes: ustar, possibly with pax or GNU long
// names) into a data directory for the recovery kit, one block at a time, so memory stays flat. Only folders and
// regular files are written, under the kit's containment rule (containment.mjs, restore-target.mjs): a path that is
// absolute or holds "..", or that lies below a symlink, is refused; links and special files are left out and named
// (a base written to one tar has no tablespace links to follow). PostgreSQL wants its folders 0700, its files 0600.
import { constants as fs } from 'node:fs';
import { lstat, mkdir, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Containment } from './containment.mjs';
import { EXIT, KitError } from './hfenc.mjs';
import { safeSegments } from './restore-target.mjs';

const BLOCK = 512;
const MAX_HEADER_DATA = 1024 * 1024;
const damaged = (message) => new KitError(EXIT.damaged, message);

/** Exact reads from an async iterable of Buffers. */
class ByteReader {
  constructor(source) {
    this.iterator = source[Symbol.asyncIterator]();
    this.buffered = [];
    this.length = 0;
    this.position = 0;
  }

  async fill(wanted) {
    while (this.length < wanted) {
      const { value, done } = await this.iterator.next();
      if (done) return false;
      if (value.length === 0) continue;
      this.buffered.push(value);
      this.length += value.length;
    }
    return true;
  }

  /** Exactly `n` bytes, or null at a clean end of input (nothing left); a short read is damage. */
  async read(n) {
    if (!(await this.fill(n))) {
      if (this.length === 0) return null;
      throw damaged(`the base backup's tar ends in the middle of a block at byte ${this.position + this.length}`);
    }
    return this.take(n);
  }

  take(n) {
    const joined = this.buffered.length === 1 ? this.buffered[0] : Buffer.concat(this.buffered);
    const out = joined.subarray(0, n);
    const rest = joined.subarray(n);
    this.buffered = rest.length > 0 ? [rest] : [];
    this.length = rest.length;
    this.position += n;
    return out;
  }

  /** `n` bytes as they arrive, a piece at a time. */
  async *pieces(n) {
    for (let left = n; left > 0; ) {
      if (this.length === 0 && !(await this.fill(1))) throw damaged(`the base backup's tar is cut short at byte ${this.position}`);
      const piece = this.take(Math.min(left, this.length, 1024 * 1024));
      left -= piece.length;
      yield piece;
    }
  }

  async skip(n) {
    for await (const piece of this.pieces(n)) void piece;
  }

  /** Reads to the end: the padding after the end-of-archive blocks, and the decrypter's check of the final chunk. */
  async drain() {
    for (let next = await this.iterator.next(); !next.done; next = await this.iterator.next()) void next;
  }
}

function field(block, offset, width) {
  const bytes = block.subarray(offset, offset + width);
  const end = bytes.indexOf(0);
  return bytes.subarray(0, end < 0 ? width : end).toString('utf8');
}

function octal(block, offset, width, what, at) {
  const bytes = block.subarray(offset, offset + width);
  // GNU base-256 for sizes of 8 GiB and more: the first byte's high bit set, the rest big-endian.
  if (bytes[0] & 0x80) {
    let value = 0n;
    for (const [index, byte] of bytes.entries()) value = (value << 8n) | BigInt(index === 0 ? byte & 0x7f : byte);
    return Number(value);
  }
  const text = field(block, offset, width).replace(/[\s\0]+/g, '');
  const value = text === '' ? 0 : Number.parseInt(text, 8);
  if (!Number.isSafeInteger(value) || value < 0 || !/^[0-7]*$/.test(text)) throw damaged(`the base backup's tar has an invalid ${what} at byte ${at}`);
  return value;
}

function checkBlock(block, at) {
  let sum = 0;
  for (let i = 0; i < BLOCK; i += 1) sum += i >= 148 && i < 156 ? 0x20 : block[i];
  if (octal(block, 148, 8, 'checksum', at) !== sum) throw damaged(`the base backup's tar has a damaged header at byte ${at} (checksum mismatch); is this a base backup?`);
}

/** pax records `<length> <key>=<value>\n`. */
function paxRecords(data, at) {
  const records = {};
  for (let position = 0; position < data.length; ) {
    const space = data.indexOf(0x20, position);
    const length = Number(data.subarray(position, space).toString('ascii'));
    if (space < 0 || !Number.isInteger(length) || length <= 0 || position + length > data.length) throw damaged(`malformed pax header at byte ${at} of the base backup's tar`);
    const record = data.subarray(space + 1, position + length - 1).toString('utf8');
    const equals = record.indexOf('=');
    if (equals > 0) records[record.slice(0, equals)] = record.slice(equals + 1);
    position += length;
  }
  return records;
}

const padded = (size) => Math.ceil(size / BLOCK) * BLOCK;

/**
 * Writes the tar read from `source` (an async iterable of Buffers) into the existing empty folder `root`. Returns
 * counts and `warnings` (members left out). Any damage or unsafe path fails the whole unpack.
 */
export async function unpackTar(source, root) {
  const reader = new ByteReader(source);
  const containment = new Containment();
  const made = new Set(['']);
  const warnings = [];
  const counts = { files: 0, directories: 0, bytes: 0 };
  let pending = {};

  const ensureDirectory = async (path) => {
    if (made.has(path)) return;
    const parent = dirname(path);
    await ensureDirectory(parent === '.' ? '' : parent);
    const absolute = join(root, path);
    await mkdir(absolute, { mode: 0o700 }).catch((error) => {
      if (error.code !== 'EEXIST') throw error;
    });
    if (!(await lstat(absolute)).isDirectory()) throw damaged(`"${path}" of the base backup is both a file and a folder`);
    made.add(path);
  };

  for (;;) {
    const at = reader.position;
    const block = await reader.read(BLOCK);
    if (block === null) break;
    if (block.every((byte) => byte === 0)) {
      await reader.drain(); // end of archive: the rest is zero padding
      break;
    }
    checkBlock(block, at);
    const type = String.fromCharCode(block[156] || 0x30);
    const headerSize = octal(block, 124, 12, 'size', at);
    const size = pending.size !== undefined ? Number(pending.size) : headerSize;
    if (!Number.isSafeInteger(size) || size < 0) throw damaged(`the base backup's tar has an invalid size at byte ${at}`);

    if (type === 'x' || type === 'g' || type === 'L') {
      if (headerSize > MAX_HEADER_DATA) throw damaged(`the base backup's tar has an implausibly large extended header at byte ${at}`);
      const data = await reader.read(padded(headerSize));
      if (data === null) throw damaged(`the base backup's tar is cut short at byte ${reader.position}`);
      if (type === 'x') pending = { ...pending, ...paxRecords(data.subarray(0, headerSize), at) };
      if (type === 'L') pending = { ...pending, path: field(data, 0, headerSize) };
      continue;
    }

    const prefix = field(block, 345, 155);
    const name = pending.path ?? (prefix ? `${prefix}/${field(block, 0, 100)}` : field(block, 0, 100));
    pending = {};
    const relative = name.replace(/^(\.\/)+/, '').replace(/\/+$/, '');
    if (relative === '' || relative === '.') {
      await reader.skip(padded(size));
      continue;
    }
    const path = safeSegments(relative).join('/');
    const kind = type === '5' ? 'directory' : type === '0' || type === '7' ? 'file' : undefined;
    if (!kind) {
      const what = type === '2' ? 'a symlink (tablespaces are not supported)' : type === '1' ? 'a hard link' : `a special file (type ${type})`;
      warnings.push(`${path}: left out, it is ${what}`);
      await reader.skip(padded(size));
      continue;
    }
    const verdict = containment.admit({ path, kind, mode: kind === 'directory' ? 0o700 : 0o600 });
    if (verdict.refused) throw damaged(`the base backup's member "${path}" is refused: ${verdict.refused}`);
    if (kind === 'directory') {
      await ensureDirectory(path);
      counts.directories += 1;
      await reader.skip(padded(size));
      continue;
    }
    const parent = dirname(path);
    await ensureDirectory(parent === '.' ? '' : parent);
    const handle = await open(join(root, path), fs.O_WRONLY | fs.O_CREAT | fs.O_EXCL | fs.O_NOFOLLOW, 0o600).catch((error) => {
      throw error.code === 'EEXIST' ? damaged(`the base backup names "${path}" twice`) : error;
    });
    try {
      for await (const piece of reader.pieces(size)) await handle.write(piece);
    } finally {
      await handle.close();
    }
    await reader.skip(padded(size) - size);
    counts.files += 1;
    counts.bytes += size;
  }
  return { counts, warnings };
}
