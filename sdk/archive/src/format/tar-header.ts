import { ArchiveFormatError } from '../errors.js';

/** Tar block size: every header and every data area is padded to a multiple of it. */
export const BLOCK_SIZE = 512;

/** Tar type flags this format writes and reads. */
export const TYPE_FLAG = {
  file: '0',
  hardlink: '1',
  symlink: '2',
  directory: '5',
  paxHeader: 'x',
} as const;

// This format's own keys travel in the standard pax `comment` record, which POSIX readers must ignore: GNU tar
// warns about unknown vendor keywords (HOLDFAST.*) on every member, but is silent about a comment.
const HOLDFAST_COMMENT_PREFIX = 'holdfast-archive ';

/** The fields of one tar member after any pax extended header has been applied. */
export interface TarHeader {
  name: string;
  mode: number;
  uid: number;
  gid: number;
  size: number;
  /** Seconds since the epoch as a pax decimal string ("1700000000.5"), so nanoseconds survive. */
  mtime: string;
  typeFlag: string;
  linkName: string;
  uname: string;
  gname: string;
  /** This format's keys (HOLDFAST.*, carried in the pax comment record) and any other extended keys, as read. */
  pax: Record<string, string>;
}

// Largest values the ustar octal fields can hold; anything larger goes into a pax record instead.
const MAX_OCTAL_SIZE = 8 ** 11 - 1;
const MAX_OCTAL_ID = 8 ** 7 - 1;
const ASCII_ONLY = /^[\x20-\x7e]*$/;

/** Number of zero bytes that pad `size` bytes of data to the next block boundary. */
export function paddingFor(size: number): number {
  const rest = size % BLOCK_SIZE;
  return rest === 0 ? 0 : BLOCK_SIZE - rest;
}

/**
 * Encodes a member's header: a pax extended header ('x') first when a value does not fit ustar (long or non-ASCII
 * names, sizes of 8 GiB and more, large ids, fractional mtimes) or when HOLDFAST.* keys are present, then the ustar
 * header. Returns whole blocks.
 */
export function encodeTarHeader(header: TarHeader): Buffer {
  const records: [string, string][] = [];
  const fitsName = (value: string, limit: number) => ASCII_ONLY.test(value) && Buffer.byteLength(value) <= limit;
  if (!fitsName(header.name, 100)) records.push(['path', header.name]);
  if (!fitsName(header.linkName, 100)) records.push(['linkpath', header.linkName]);
  if (header.size > MAX_OCTAL_SIZE) records.push(['size', String(header.size)]);
  if (header.uid > MAX_OCTAL_ID) records.push(['uid', String(header.uid)]);
  if (header.gid > MAX_OCTAL_ID) records.push(['gid', String(header.gid)]);
  if (!fitsName(header.uname, 31)) records.push(['uname', header.uname]);
  if (!fitsName(header.gname, 31)) records.push(['gname', header.gname]);
  const wholeSeconds = mtimeWholeSeconds(header.mtime);
  if (header.mtime !== String(wholeSeconds) || wholeSeconds < 0 || wholeSeconds > MAX_OCTAL_SIZE) {
    records.push(['mtime', header.mtime]);
  }
  if (Object.keys(header.pax).length > 0) records.push(['comment', `${HOLDFAST_COMMENT_PREFIX}${JSON.stringify(header.pax)}`]);

  const ustar = encodeUstarBlock({
    name: asciiFallback(header.name, 100),
    mode: header.mode,
    uid: header.uid > MAX_OCTAL_ID ? 0 : header.uid,
    gid: header.gid > MAX_OCTAL_ID ? 0 : header.gid,
    size: header.size > MAX_OCTAL_SIZE ? 0 : header.size,
    mtime: Math.min(Math.max(wholeSeconds, 0), MAX_OCTAL_SIZE),
    typeFlag: header.typeFlag,
    linkName: asciiFallback(header.linkName, 100),
    uname: asciiFallback(header.uname, 31),
    gname: asciiFallback(header.gname, 31),
  });
  if (records.length === 0) return ustar;

  const paxData = Buffer.from(records.map(([key, value]) => encodePaxRecord(key, value)).join(''), 'utf8');
  const paxHeader = encodeUstarBlock({
    name: asciiFallback(`PaxHeaders/${lastSegment(header.name)}`, 100),
    mode: 0o644,
    uid: 0,
    gid: 0,
    size: paxData.length,
    mtime: 0,
    typeFlag: TYPE_FLAG.paxHeader,
    linkName: '',
    uname: '',
    gname: '',
  });
  return Buffer.concat([paxHeader, paxData, Buffer.alloc(paddingFor(paxData.length)), ustar]);
}

/** One pax record: "<length> <key>=<value>\n", where length counts its own digits. */
export function encodePaxRecord(key: string, value: string): string {
  const rest = Buffer.byteLength(` ${key}=${value}\n`);
  let length = rest + String(rest).length;
  if (String(length).length !== String(rest).length) length = rest + String(length).length;
  return `${length} ${key}=${value}\n`;
}

/** Parses pax records; rejects malformed ones instead of guessing. */
export function decodePaxRecords(data: Buffer): Record<string, string> {
  const records: Record<string, string> = {};
  let position = 0;
  while (position < data.length) {
    const space = data.indexOf(0x20, position);
    const length = Number(data.subarray(position, space).toString('ascii'));
    if (space < 0 || !Number.isInteger(length) || length <= 0 || position + length > data.length) {
      throw new ArchiveFormatError(`malformed pax record at byte ${position} of an extended header`);
    }
    const record = data.subarray(space + 1, position + length - 1).toString('utf8');
    const equals = record.indexOf('=');
    if (equals < 0) throw new ArchiveFormatError(`pax record without "=" at byte ${position} of an extended header`);
    records[record.slice(0, equals)] = record.slice(equals + 1);
    position += length;
  }
  return records;
}

interface UstarFields {
  name: string;
  mode: number;
  uid: number;
  gid: number;
  size: number;
  mtime: number;
  typeFlag: string;
  linkName: string;
  uname: string;
  gname: string;
}

function encodeUstarBlock(fields: UstarFields): Buffer {
  const block = Buffer.alloc(BLOCK_SIZE);
  block.write(fields.name, 0, 100, 'ascii');
  writeOctal(block, 100, 8, fields.mode & 0o7777);
  writeOctal(block, 108, 8, fields.uid);
  writeOctal(block, 116, 8, fields.gid);
  writeOctal(block, 124, 12, fields.size);
  writeOctal(block, 136, 12, fields.mtime);
  block.write(fields.typeFlag, 156, 1, 'ascii');
  block.write(fields.linkName, 157, 100, 'ascii');
  block.write('ustar\u000000', 257, 8, 'ascii');
  block.write(fields.uname, 265, 32, 'ascii');
  block.write(fields.gname, 297, 32, 'ascii');
  writeOctal(block, 329, 8, 0);
  writeOctal(block, 337, 8, 0);
  block.fill(0x20, 148, 156);
  const checksum = block.reduce((sum, byte) => sum + byte, 0);
  block.write(`${checksum.toString(8).padStart(6, '0')}\u0000 `, 148, 8, 'ascii');
  return block;
}

/** True when the block is all zeros (the end-of-archive marker is two of them). */
export function isZeroBlock(block: Buffer): boolean {
  return block.every((byte) => byte === 0);
}

/** Decodes one ustar block; `pax` holds the preceding extended header's records, which override ustar fields. */
export function decodeUstarBlock(block: Buffer, pax: Record<string, string>, offset: number): TarHeader {
  const stored = Number.parseInt(block.subarray(148, 156).toString('ascii').replace(/[\0 ]/g, ''), 8);
  const copy = Buffer.from(block);
  copy.fill(0x20, 148, 156);
  const actual = copy.reduce((sum, byte) => sum + byte, 0);
  if (stored !== actual) throw new ArchiveFormatError(`tar header checksum mismatch at byte ${offset}`);
  if (block.subarray(257, 262).toString('ascii') !== 'ustar') {
    throw new ArchiveFormatError(`not a ustar/pax header at byte ${offset}`);
  }
  const prefix = readString(block, 345, 155);
  const ustarName = readString(block, 0, 100);
  const extended = { ...pax };
  const known = new Set(['path', 'linkpath', 'size', 'uid', 'gid', 'uname', 'gname', 'mtime']);
  for (const key of Object.keys(extended)) if (known.has(key)) delete extended[key];
  if (pax.comment?.startsWith(HOLDFAST_COMMENT_PREFIX)) {
    delete extended.comment;
    Object.assign(extended, parseHoldfastComment(pax.comment.slice(HOLDFAST_COMMENT_PREFIX.length), offset));
  }
  return {
    name: pax.path ?? (prefix ? `${prefix}/${ustarName}` : ustarName),
    mode: readOctal(block, 100, 8),
    uid: pax.uid !== undefined ? paxInteger(pax.uid, 'uid') : readOctal(block, 108, 8),
    gid: pax.gid !== undefined ? paxInteger(pax.gid, 'gid') : readOctal(block, 116, 8),
    size: pax.size !== undefined ? paxInteger(pax.size, 'size') : readOctal(block, 124, 12),
    mtime: pax.mtime ?? String(readOctal(block, 136, 12)),
    typeFlag: String.fromCharCode(block[156] ?? 0x30).replace('\0', '0'),
    linkName: pax.linkpath ?? readString(block, 157, 100),
    uname: pax.uname ?? readString(block, 265, 32),
    gname: pax.gname ?? readString(block, 297, 32),
    pax: extended,
  };
}

function parseHoldfastComment(json: string, offset: number): Record<string, string> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new ArchiveFormatError(`unreadable holdfast-archive comment in the header at byte ${offset}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Object.values(parsed).some((value) => typeof value !== 'string')) {
    throw new ArchiveFormatError(`the holdfast-archive comment in the header at byte ${offset} is not an object of strings`);
  }
  return parsed as Record<string, string>;
}

function paxInteger(value: string, key: string): number {
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(parsed)) {
    throw new ArchiveFormatError(`pax record ${key}="${value}" is not a non-negative integer`);
  }
  return parsed;
}

function writeOctal(block: Buffer, offset: number, width: number, value: number): void {
  block.write(`${value.toString(8).padStart(width - 1, '0')}\u0000`, offset, width, 'ascii');
}

function readOctal(block: Buffer, offset: number, width: number): number {
  const text = readString(block, offset, width).trim();
  return text === '' ? 0 : Number.parseInt(text, 8);
}

function readString(block: Buffer, offset: number, width: number): string {
  const field = block.subarray(offset, offset + width);
  const end = field.indexOf(0);
  return field.subarray(0, end < 0 ? width : end).toString('utf8');
}

function mtimeWholeSeconds(mtime: string): number {
  return Math.floor(Number(mtime));
}

function lastSegment(name: string): string {
  const trimmed = name.replace(/\/+$/, '');
  return trimmed.slice(trimmed.lastIndexOf('/') + 1);
}

// The ustar field still gets a readable name when the real one lives in the pax record (old readers show it).
function asciiFallback(value: string, limit: number): string {
  const ascii = value.replace(/[^\x20-\x7e]/g, '_');
  return ascii.length <= limit ? ascii : ascii.slice(ascii.length - limit);
}
