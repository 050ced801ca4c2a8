// Reading Holdfast seekable archives (docs/formats/archive.md) for the recovery kit: the archive's bytes (plain or
// HFENC-encrypted as a whole), its index (from the .index.json sidecar or from the archive's tail) and the stored
// bytes of one member. Everything is read by position, a block or a record at a time, so memory stays flat.
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { EXIT, EncryptedFileReader, KitError, MAGIC, createDecrypter, naming, readExactly } from './hfenc.mjs';

const BLOCK = 512;
const TAIL_SIZE = 2048;
const TRAILER_PATH = '.holdfast/trailer';
const INDEX_MAGIC = 'HOLDFAST-INDEX 1 sha256=';
const HOLDFAST_COMMENT = 'holdfast-archive ';
// Bounds on what is read whole, so a damaged length field cannot make the script allocate gigabytes.
const MAX_PAX_BYTES = 1024 * 1024;
const MAX_INDEX_BYTES = 512 * 1024 * 1024;
const RANGE_PIECE = 256 * 1024;

const damaged = (message) => new KitError(EXIT.damaged, message);

/** A plain archive file read by position. */
class PlainFileReader {
  constructor(handle, size) {
    this.handle = handle;
    this.size = size;
  }

  async *range(start, end) {
    for (let position = start; position < end; position += RANGE_PIECE) {
      const piece = Buffer.alloc(Math.min(RANGE_PIECE, end - position));
      await readExactly(this.handle, piece, position);
      yield piece;
    }
  }
}

/**
 * Opens an archive for positional reads of its plaintext. An HFENC file (recognised by its magic, whatever its
 * name) is decrypted record by record; `getKey` is only called then, so plain archives need no key.
 */
export async function openArchiveFile(path, getKey) {
  let handle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw new KitError(EXIT.io, `cannot open ${path}: ${error.code ?? error.message}`);
  }
  try {
    const { size } = await handle.stat();
    const start = Buffer.alloc(Math.min(MAGIC.length, size));
    await readExactly(handle, start, 0);
    const isEncrypted = start.equals(MAGIC);
    const reader = isEncrypted ? await EncryptedFileReader.open(handle, size, getKey(path), path) : new PlainFileReader(handle, size);
    return new ArchiveFile(path, handle, reader, isEncrypted);
  } catch (error) {
    await handle.close();
    throw error;
  }
}

/** The plaintext bytes of one archive: `read` for small ranges (headers, the index), `range` to stream data. */
export class ArchiveFile {
  constructor(path, handle, reader, isEncrypted) {
    this.path = path;
    this.handle = handle;
    this.reader = reader;
    this.isEncrypted = isEncrypted;
    this.size = reader.size;
  }

  range(start, end) {
    if (start < 0 || end > this.size || start > end) throw damaged(`${this.path}: bytes ${start}..${end} lie outside the archive`);
    return this.reader.range(start, end);
  }

  async read(start, length) {
    const pieces = [];
    for await (const piece of this.range(start, start + length)) pieces.push(piece);
    return Buffer.concat(pieces, length);
  }

  close() {
    return this.handle.close();
  }
}

/** Parses the trailer in the archive's last 2048 bytes: where the index member's data is and its SHA-256. */
export async function readTrailer(file) {
  if (file.size < TAIL_SIZE) throw damaged(`${file.path} is too short to be a Holdfast archive`);
  const tail = await file.read(file.size - TAIL_SIZE, TAIL_SIZE);
  if (!tail.subarray(2 * BLOCK).every((byte) => byte === 0)) {
    throw damaged(`${file.path} does not end like a Holdfast archive (truncated, or not an archive)`);
  }
  const header = decodeUstarBlock(tail.subarray(0, BLOCK), file.path, file.size - TAIL_SIZE);
  if (header.name !== TRAILER_PATH || header.size > BLOCK) throw damaged(`${file.path} has no ${TRAILER_PATH} at its end`);
  const lines = tail.subarray(BLOCK, BLOCK + header.size).toString('ascii').split('\n');
  if (lines[0] !== 'holdfast-archive-trailer 1') throw damaged(`${file.path}: unknown trailer "${lines[0]}"`);
  const fields = new Map(lines.slice(1).map((line) => [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)]));
  const integer = (key) => {
    const value = Number(fields.get(key));
    if (!Number.isSafeInteger(value) || value < 0) throw damaged(`${file.path}: trailer field ${key} is missing or invalid`);
    return value;
  };
  const trailer = {
    indexOffset: integer('index-offset'),
    indexLength: integer('index-length'),
    indexSha256: fields.get('index-sha256') ?? '',
    isIndexSealed: fields.get('index-sealed') === '1',
  };
  if (trailer.indexOffset + trailer.indexLength > file.size - TAIL_SIZE) throw damaged(`${file.path}: the trailer points past the archive`);
  return trailer;
}

/**
 * The verified index of an open archive. It comes from `<archive>.index.json` when that file exists (decrypted when
 * it is HFENC), else from the index member the trailer points at. Either way its SHA-256 must be the one the
 * trailer records, so a sidecar of another archive is caught before any of its offsets is used.
 */
export async function readArchiveIndex(file, getKey) {
  const trailer = await readTrailer(file);
  if (trailer.isIndexSealed) throw damaged(`${file.path}: the index is sealed, which this script does not read`);
  if (trailer.indexLength > MAX_INDEX_BYTES) throw damaged(`${file.path}: the index is ${trailer.indexLength} bytes, more than this script accepts`);
  const sidecarPath = `${file.path}.index.json`;
  const hasSidecar = existsSync(sidecarPath);
  const bytes = hasSidecar ? await readIndexSidecar(sidecarPath, getKey) : await file.read(trailer.indexOffset, trailer.indexLength);
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (digest !== trailer.indexSha256) {
    throw damaged(
      hasSidecar
        ? `${sidecarPath} does not belong to ${file.path} (its SHA-256 differs from the one in the archive's trailer)`
        : `${file.path}: the index does not match the SHA-256 in the trailer`,
    );
  }
  return { index: decodeIndexFile(bytes, file.path), source: hasSidecar ? sidecarPath : `the tail of ${file.path}` };
}

async function readIndexSidecar(path, getKey) {
  const handle = await open(path, 'r');
  const start = Buffer.alloc(MAGIC.length);
  const { bytesRead } = await handle.read(start, 0, MAGIC.length, 0);
  await handle.close();
  const isEncrypted = bytesRead === MAGIC.length && start.equals(MAGIC);
  const pieces = [];
  let length = 0;
  const collect = new Writable({
    write(chunk, _encoding, callback) {
      length += chunk.length;
      if (length > MAX_INDEX_BYTES) return callback(damaged(`${path} is larger than an index may be`));
      pieces.push(chunk);
      callback();
    },
  });
  const stages = [createReadStream(path)];
  if (isEncrypted) stages.push(createDecrypter(getKey(path)));
  await naming(path, () => pipeline([...stages, collect]));
  return Buffer.concat(pieces);
}

/** Checks the index file's checksum line, then parses and validates what the kit relies on. */
export function decodeIndexFile(bytes, label) {
  const lineEnd = INDEX_MAGIC.length + 64;
  if (bytes.subarray(0, INDEX_MAGIC.length).toString('latin1') !== INDEX_MAGIC || bytes[lineEnd] !== 0x0a) {
    throw damaged(`the index of ${label} does not start with "HOLDFAST-INDEX 1"`);
  }
  const json = bytes.subarray(lineEnd + 1);
  const expected = bytes.subarray(INDEX_MAGIC.length, lineEnd).toString('latin1');
  const actual = createHash('sha256').update(json).digest('hex');
  if (actual !== expected) throw damaged(`the index of ${label} is damaged (checksum ${actual}, recorded ${expected})`);
  let index;
  try {
    index = JSON.parse(json.toString('utf8'));
  } catch (error) {
    throw damaged(`the index of ${label} is not JSON: ${error.message}`);
  }
  validateIndex(index, label);
  return index;
}

const KINDS = new Set(['file', 'directory', 'symlink', 'hardlink', 'database-dump']);
const COMPRESSIONS = new Set(['none', 'gzip', 'zstd']);
const isCount = (value) => Number.isSafeInteger(value) && value >= 0;
const isName = (value) => typeof value === 'string' && value.length > 0;

function validateIndex(index, label) {
  const fail = (what) => damaged(`the index of ${label} is not a Holdfast archive index version 1: ${what}`);
  if (index?.format !== 'holdfast-archive-index' || index.version !== 1) throw fail('unknown format or version');
  if (!Array.isArray(index.entries)) throw fail('no entries');
  const { chain } = index;
  if (chain !== null && !(isName(chain?.id) && isCount(chain.sequence) && Array.isArray(chain.baseArchives) && chain.baseArchives.every(isName))) {
    throw fail('invalid chain');
  }
  index.entries.forEach((entry, position) => {
    const problem = entryProblem(entry);
    if (problem) throw fail(`entry ${position} (${JSON.stringify(entry?.path)}) has ${problem}`);
  });
}

function entryProblem(entry) {
  if (!isName(entry?.path)) return 'no path';
  if (!KINDS.has(entry.kind)) return `unknown kind ${JSON.stringify(entry.kind)}`;
  if (!isCount(entry.mode) || entry.mode > 0o7777 || !isCount(entry.uid) || !isCount(entry.gid)) return 'an invalid mode, uid or gid';
  if (typeof entry.mtime !== 'string' || !/^-?\d+(\.\d{1,9})?$/.test(entry.mtime)) return 'an invalid mtime';
  if (!isCount(entry.offset) || !isCount(entry.length)) return 'an invalid offset or length';
  if (entry.archive !== undefined && !isName(entry.archive)) return 'an invalid archive';
  const hasContent = entry.kind === 'file' || entry.kind === 'database-dump';
  if (hasContent && (!isCount(entry.size) || !/^[0-9a-f]{64}$/.test(entry.sha256 ?? '') || !COMPRESSIONS.has(entry.compression))) {
    return 'no valid size, sha256 or compression';
  }
  if ((entry.kind === 'symlink' || entry.kind === 'hardlink') && !isName(entry.target)) return 'no target';
  return undefined;
}

/**
 * The stored (still compressed) bytes of a file or dump: its one tar entry, or its parts in order. `storedEntry`
 * is the entry of the archive that holds the bytes; its path is the name in the tar headers (a renamed file keeps
 * its old name there). The headers are checked against it, so a wrong offset cannot restore another member's data.
 */
export async function* storedContent(file, storedEntry) {
  const { path, offset, compression } = storedEntry;
  const end = offset + storedEntry.length;
  if (end > file.size - TAIL_SIZE) throw damaged(`${file.path}: "${path}" would lie past the archive's end`);
  for (let part = 0, position = offset; ; part += 1) {
    const header = await readMemberHeader(file, position);
    const isChunked = header.holdfast['HOLDFAST.part'] !== undefined;
    const name = isChunked ? header.holdfast['HOLDFAST.path'] : header.name;
    if (header.typeFlag !== '0' || name !== path || header.end > end) {
      throw damaged(`${file.path}: byte ${position} does not hold "${path}" (found "${header.name}"): the index does not match the archive`);
    }
    const isExpectedPart = isChunked
      ? header.holdfast['HOLDFAST.part'] === String(part) && header.holdfast['HOLDFAST.compression'] === compression
      : part === 0 && compression === 'none';
    if (!isExpectedPart) throw damaged(`${file.path}: "${path}" expected part ${part} (${compression}) at byte ${position}`);
    yield* file.range(header.dataStart, header.dataStart + header.size);
    if (!isChunked || header.holdfast['HOLDFAST.final'] === '1') return;
    position = header.end;
  }
}

/** One member's header at `position`: a pax extended header when there is one, then the ustar header. */
async function readMemberHeader(file, position) {
  let block = await file.read(position, BLOCK);
  let pax = {};
  let dataStart = position + BLOCK;
  if (String.fromCharCode(block[156]) === 'x') {
    const paxSize = decodeUstarBlock(block, file.path, position).size;
    if (paxSize > MAX_PAX_BYTES) throw damaged(`${file.path}: the extended header at byte ${position} is implausibly large`);
    pax = decodePaxRecords(await file.read(dataStart, paxSize), file.path, position);
    const ustarAt = dataStart + paddedSize(paxSize);
    block = await file.read(ustarAt, BLOCK);
    dataStart = ustarAt + BLOCK;
  }
  const header = decodeUstarBlock(block, file.path, dataStart - BLOCK, pax);
  return { ...header, dataStart, end: dataStart + paddedSize(header.size) };
}

function decodeUstarBlock(block, label, offset, pax = {}) {
  const stored = Number.parseInt(block.subarray(148, 156).toString('ascii').replace(/[\0 ]/g, ''), 8);
  let sum = 0;
  for (let i = 0; i < BLOCK; i += 1) sum += i >= 148 && i < 156 ? 0x20 : block[i];
  if (stored !== sum) throw damaged(`${label}: tar header checksum mismatch at byte ${offset}`);
  if (block.subarray(257, 262).toString('ascii') !== 'ustar') throw damaged(`${label}: no tar header at byte ${offset}`);
  const prefix = readField(block, 345, 155);
  const ustarName = readField(block, 0, 100);
  const holdfast = pax.comment?.startsWith(HOLDFAST_COMMENT) ? parseHoldfastKeys(pax.comment, label, offset) : {};
  const size = pax.size !== undefined ? Number(pax.size) : Number.parseInt(readField(block, 124, 12).trim() || '0', 8);
  if (!isCount(size)) throw damaged(`${label}: invalid size in the tar header at byte ${offset}`);
  return {
    name: (pax.path ?? (prefix ? `${prefix}/${ustarName}` : ustarName)).replace(/\/+$/, ''),
    size,
    typeFlag: String.fromCharCode(block[156] || 0x30),
    holdfast,
  };
}

function parseHoldfastKeys(comment, label, offset) {
  try {
    const keys = JSON.parse(comment.slice(HOLDFAST_COMMENT.length));
    if (keys && typeof keys === 'object') return keys;
  } catch {
    // reported below
  }
  throw damaged(`${label}: unreadable holdfast-archive keys in the header at byte ${offset}`);
}

/** pax records: "<length> <key>=<value>\n", where length counts the whole record in bytes. */
function decodePaxRecords(data, label, offset) {
  const records = {};
  for (let position = 0; position < data.length; ) {
    const space = data.indexOf(0x20, position);
    const length = Number(data.subarray(position, space).toString('ascii'));
    if (space < 0 || !Number.isInteger(length) || length <= 0 || position + length > data.length) {
      throw damaged(`${label}: malformed extended header at byte ${offset}`);
    }
    const record = data.subarray(space + 1, position + length - 1).toString('utf8');
    const equals = record.indexOf('=');
    if (equals < 0) throw damaged(`${label}: malformed extended header at byte ${offset}`);
    records[record.slice(0, equals)] = record.slice(equals + 1);
    position += length;
  }
  return records;
}

function readField(block, offset, width) {
  const field = block.subarray(offset, offset + width);
  const end = field.indexOf(0);
  return field.subarray(0, end < 0 ? width : end).toString('utf8');
}

function paddedSize(size) {
  return Math.ceil(size / BLOCK) * BLOCK;
}
