// The binary log side of the kit's MySQL/MariaDB point-in-time restore (`mysql-pitr`): finds the archived binary log
// files a user downloaded from `pitr/<job id>/wal/` of a destination, picks the ones a base backup needs (from the
// base's file on, a completed file before a partial of the same name, a partial only as the newest piece), refuses a
// missing start file and gaps, and decrypts them into the work folder under their server names while walking their
// event headers (for the newest event time, and to stop fetching once a time target is passed).
import { createWriteStream, readdirSync, statSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { codecOfName, decodeFile, ensureDecoder } from './decompress.mjs';
import { EXIT, KitError } from './hfenc.mjs';

/** `<name>.<number>[.partial][.gz|.br|.zst][.enc]`: how the engine stores a binary log piece (docs/pitr.md). */
const PIECE = /^([^.].*)\.(\d{6,})(\.partial)?(\.gz|\.br|\.zst)?(\.enc)?$/;
/** Every binary log file starts with these four bytes. */
const BINLOG_MAGIC = Buffer.from([0xfe, 0x62, 0x69, 0x6e]);
/** An event header: timestamp (bytes 0-3), type, server id, then the event's length (bytes 9-12); 19 bytes in all. */
const EVENT_HEADER_BYTES = 19;

/** `mysql-bin.000042` -> { base: 'mysql-bin', number: 42, digits: 6 }; undefined for another name. */
export function splitBinlogName(name) {
  const match = /^(.+)\.(\d{6,})$/.exec(name);
  return match ? { base: match[1], number: Number(match[2]), digits: match[2].length } : undefined;
}

/** The name of file `number` in the series of `like` (numbers keep at least its digit count). */
export function binlogName(like, number) {
  const { base, digits } = splitBinlogName(like);
  return `${base}.${String(number).padStart(digits, '0')}`;
}

/**
 * Every archived piece of the series `base` (the part before the number) below `folder`: per file number its
 * completed object and its partial. The folder may be `wal/`, its `00000001/` folder or a flat folder of objects.
 */
export function scanBinlogFolder(folder, base) {
  if (!statSync(folder, { throwIfNoEntry: false })?.isDirectory()) throw new KitError(EXIT.io, `--binlogs ${folder} is not a folder`);
  const pieces = new Map();
  let ignored = 0;
  const visit = (dir, depth) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && depth < 3) {
        visit(path, depth + 1);
        continue;
      }
      const match = entry.isFile() ? PIECE.exec(entry.name) : null;
      if (!match || match[1] !== base) {
        ignored += 1;
        continue;
      }
      const number = Number(match[2]);
      const piece = pieces.get(number) ?? { name: `${match[1]}.${match[2]}` };
      const slot = match[3] ? 'partial' : 'complete';
      // Two copies of one piece (two destinations' folders): the newer file wins, as the engine rewrites partials.
      if (!piece[slot] || statSync(piece[slot]).mtimeMs < statSync(path).mtimeMs) piece[slot] = path;
      pieces.set(number, piece);
    }
  };
  visit(folder, 0);
  return { pieces, ignored };
}

/**
 * The files to replay, in order from `startFile`: each number's completed file, else (only for the newest number of
 * all) its partial; up to `lastFile` when given. Refuses a missing start file and any hole before the end.
 */
export function planBinlogs(pieces, { startFile, lastFile }) {
  const start = splitBinlogName(startFile).number;
  const newest = Math.max(start, ...[...pieces.keys()].filter((number) => number >= start));
  const last = lastFile === undefined ? newest : splitBinlogName(lastFile).number;
  if (last > newest) {
    throw new KitError(EXIT.target, `the target position lies in ${lastFile}, after the archived binary log (the newest file here is ${binlogName(startFile, newest)}): download newer files, or choose an earlier position`);
  }
  const plan = [];
  const holes = [];
  for (let number = start; number <= last; number += 1) {
    const piece = pieces.get(number);
    const name = piece?.name ?? binlogName(startFile, number);
    if (piece?.complete) plan.push({ name, path: piece.complete, partial: false });
    else if (piece?.partial && number === newest) plan.push({ name, path: piece.partial, partial: true });
    else holes.push(piece?.partial ? `${name} (only a partial is here; the completed file is missing)` : name);
  }
  if (plan[0]?.name !== startFile) {
    throw new KitError(EXIT.missingWal, `the binary log file ${startFile}, where the base backup starts, is not in the --binlogs folder: download pitr/<job id>/wal/ of the destination (the whole folder)`);
  }
  if (holes.length > 0) {
    const shown = holes.length > 5 ? [...holes.slice(0, 5), `… ${holes.length - 5} more`] : holes;
    throw new KitError(
      EXIT.missingWal,
      `binary log files are missing between ${startFile} and ${plan[plan.length - 1].name}: ${shown.join(', ')}. Download them; if the archive itself has a gap (the job showed one), only instants before it can be restored from this base`,
    );
  }
  return plan;
}

/**
 * Passes a plain binary log file through, checking its magic and walking its event headers: the newest event time
 * (whole seconds) of the events that begin at `from` or later, and the file's length.
 */
export class EventWalk extends Transform {
  constructor(label, from = 4) {
    super();
    this.label = label;
    this.from = from;
    this.newestSeconds = 0;
    this.bytes = 0;
    this.magic = Buffer.alloc(0);
    this.next = BINLOG_MAGIC.length;
    /** The bytes from `next` on when a header straddles two chunks. */
    this.pending = Buffer.alloc(0);
  }

  _transform(chunk, _encoding, callback) {
    if (this.magic.length < BINLOG_MAGIC.length) {
      this.magic = Buffer.concat([this.magic, chunk.subarray(0, BINLOG_MAGIC.length - this.magic.length)]);
      if (this.magic.length === BINLOG_MAGIC.length && !this.magic.equals(BINLOG_MAGIC)) {
        return callback(new KitError(EXIT.damaged, `${this.label} is not a binary log file (it does not start with the binary log's magic bytes)`));
      }
    }
    const data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    const dataStart = this.bytes - this.pending.length;
    this.bytes += chunk.length;
    // Only the time (bytes 0-3) and the length (bytes 9-12) of each header are read.
    while (this.next >= dataStart && this.next + 13 <= this.bytes) {
      const at = this.next - dataStart;
      const length = data.readUInt32LE(at + 9);
      if (this.next >= this.from) this.newestSeconds = Math.max(this.newestSeconds, data.readUInt32LE(at));
      if (length < EVENT_HEADER_BYTES) return callback(new KitError(EXIT.damaged, `${this.label}: the event at byte ${this.next} claims ${length} bytes: the file is damaged`));
      this.next += length;
    }
    this.pending = this.next >= dataStart && this.next < this.bytes ? Buffer.from(data.subarray(this.next - dataStart)) : Buffer.alloc(0);
    callback(null, chunk);
  }
}

/**
 * Decrypts and decompresses one piece into `<dir>/<its server name>` (through a side file, renamed once complete);
 * answers the newest event time from `from` on and the file's length.
 */
export async function restoreBinlog(piece, dir, key, from = 4) {
  const codec = codecOfName(piece.path);
  ensureDecoder(codec);
  const target = join(dir, piece.name);
  const side = `${target}.partial-download`;
  const walk = new EventWalk(piece.path, from);
  try {
    await decodeFile(piece.path, {
      key,
      codec,
      label: piece.path,
      sink: (source) => pipeline(source, walk, createWriteStream(side, { mode: 0o600, flags: 'wx' })),
    });
    await rename(side, target);
  } catch (error) {
    await rm(side, { force: true });
    throw error;
  }
  return { file: target, newestSeconds: walk.newestSeconds, bytes: walk.bytes };
}

/**
 * `--target-gtid 0-1-352` -> { domain, serverId, sequence, text }: one MariaDB GTID (domain-server-sequence, as
 * @@last_gtid answers it). MySQL's `uuid:n` is refused: the kit cannot locate it (tested against MariaDB only).
 */
export function parseGtid(text) {
  if (/^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}:/i.test(text)) {
    throw new KitError(EXIT.usage, `--target-gtid "${text}" is MySQL's form (server uuid:number), which the kit does not support: give a MariaDB GTID (domain-server-sequence, like 0-1-352), or use --target-time or --target-position`);
  }
  const match = /^(\d{1,10})-(\d{1,10})-(\d{1,20})$/.exec(text);
  if (!match) throw new KitError(EXIT.usage, `--target-gtid must be one MariaDB GTID, domain-server-sequence like 0-1-352 (SELECT @@last_gtid after the commit), not "${text}"`);
  const [domain, serverId, sequence] = [Number(match[1]), Number(match[2]), BigInt(match[3])];
  if (domain > 0xffffffff || serverId > 0xffffffff || sequence > (1n << 64n) - 1n || sequence === 0n) {
    throw new KitError(EXIT.usage, `--target-gtid "${text}" is out of range: domain and server id are 32-bit numbers, the sequence a 64-bit number from 1`);
  }
  return { domain, serverId, sequence, text };
}

// Event types and flags the GTID search reads (MariaDB): a transaction opens with a GTID event and ends after its
// XID event, or a Query event COMMIT/ROLLBACK (XA COMMIT/XA ROLLBACK), or an XA_PREPARE event; a standalone GTID
// (flag 1, a DDL) ends after its one Query event.
const QUERY_EVENT = 2;
const XID_EVENT = 16;
const XA_PREPARE_EVENT = 38;
const GTID_EVENT = 162;
const FL_STANDALONE = 1;
const WINDOW_BYTES = 1024 * 1024;

/** Reads a plain file at any offset through a 1 MiB window (the search jumps from event header to event header). */
class WindowReader {
  constructor(handle, size) {
    this.handle = handle;
    this.size = size;
    this.start = 0;
    this.data = Buffer.alloc(0);
  }

  async bytes(at, length) {
    const end = Math.min(at + length, this.size);
    if (at < this.start || end > this.start + this.data.length) {
      const buffer = Buffer.alloc(Math.max(WINDOW_BYTES, end - at));
      const { bytesRead } = await this.handle.read(buffer, 0, buffer.length, at);
      this.start = at;
      this.data = buffer.subarray(0, bytesRead);
    }
    return this.data.subarray(at - this.start, end - this.start);
  }
}

/** The start of a Query event's statement (after its fixed part, status variables and database name). */
async function queryStart(reader, at, length) {
  const fixed = await reader.bytes(at + EVENT_HEADER_BYTES, 13);
  if (fixed.length < 13) return '';
  const skip = 13 + fixed.readUInt16LE(11) + fixed[8] + 1;
  return (await reader.bytes(at + EVENT_HEADER_BYTES + skip, Math.min(16, Math.max(0, length - EVENT_HEADER_BYTES - skip)))).toString('latin1');
}

/**
 * Where the transaction `gtid` ends in the decrypted files (`{ file, bytes, name }` from the base's file on): the
 * index of its file and the offset just after its commit event, for --stop-position. Refuses (exit 8) a GTID logged
 * before the base's start, one the files do not hold after it, and one whose commit is not in the files yet.
 */
export async function findGtidEnd(files, start, gtid) {
  let lowest;
  let highest;
  for (const [index, file] of files.entries()) {
    const handle = await open(file.file, 'r');
    try {
      const reader = new WindowReader(handle, file.bytes);
      let openFlags;
      for (let at = BINLOG_MAGIC.length; at + EVENT_HEADER_BYTES <= file.bytes; ) {
        const header = Buffer.from(await reader.bytes(at, EVENT_HEADER_BYTES));
        const [type, serverId, length] = [header[4], header.readUInt32LE(5), header.readUInt32LE(9)];
        if (length < EVENT_HEADER_BYTES) throw new KitError(EXIT.damaged, `${file.name}: the event at byte ${at} claims ${length} bytes: the file is damaged`);
        if (openFlags !== undefined) {
          if (type === GTID_EVENT) return { index, offset: at };
          const isEnd =
            type === XID_EVENT ||
            type === XA_PREPARE_EVENT ||
            (type === QUERY_EVENT && ((openFlags & FL_STANDALONE) !== 0 || /^\s*(COMMIT|ROLLBACK|XA COMMIT|XA ROLLBACK)\b/i.test(await queryStart(reader, at, length))));
          if (isEnd) return { index, offset: at + length };
        } else if (type === GTID_EVENT) {
          const body = Buffer.from(await reader.bytes(at + EVENT_HEADER_BYTES, 13));
          const [sequence, domain] = [body.readBigUInt64LE(0), body.readUInt32LE(8)];
          const isTarget = domain === gtid.domain && serverId === gtid.serverId && sequence === gtid.sequence;
          if (index === 0 && at < start.offset) {
            if (isTarget) throw new KitError(EXIT.target, `GTID ${gtid.text} was logged at ${file.name}:${at}, before this base backup starts (${start.file}:${start.offset}): its transaction is already in the base; choose an older base backup or a later GTID`);
          } else {
            if (domain === gtid.domain) {
              lowest = lowest === undefined || sequence < lowest ? sequence : lowest;
              highest = highest === undefined || sequence > highest ? sequence : highest;
            }
            if (isTarget) openFlags = body[12];
          }
        }
        at += length;
      }
      if (openFlags !== undefined) throw new KitError(EXIT.target, `the transaction of GTID ${gtid.text} is not whole in ${file.name} (its commit is not in the downloaded copy): download a newer copy, or choose an earlier GTID`);
    } finally {
      await handle.close();
    }
  }
  const last = files[files.length - 1];
  if (lowest !== undefined && gtid.sequence < lowest) {
    throw new KitError(EXIT.target, `GTID ${gtid.text} is not in the binary log from this base backup's start (${start.file}:${start.offset}) on, where domain ${gtid.domain} begins at sequence ${lowest}: it was logged before this base; choose an older base backup`);
  }
  const seen = highest === undefined ? `no transaction of domain ${gtid.domain} is there` : `domain ${gtid.domain} goes up to sequence ${highest}`;
  throw new KitError(EXIT.target, `GTID ${gtid.text} is not in the binary log from this base backup's start (${start.file}:${start.offset}) to the end of ${last.name} (${seen}): download newer files, or check the GTID`);
}
