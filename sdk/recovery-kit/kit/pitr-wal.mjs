// The WAL side of the recovery kit's point-in-time restore: finds the archived WAL objects a user downloaded from
// `pitr/<job id>/wal/` of a destination, picks the ones a base backup needs (from its start segment on, one
// timeline, a completed segment before a partial of the same name, a partial only as the newest piece), refuses gaps,
// and decrypts and decompresses them into the restore folder under their segment names.
import { closeSync, createWriteStream, openSync, readSync, readdirSync, statSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { codecOfName, decodeFile, ensureDecoder } from './decompress.mjs';
import { EXIT, KitError } from './hfenc.mjs';

const FOUR_GIB = 0x1_0000_0000;
export const DEFAULT_SEGMENT_BYTES = 16 * 1024 * 1024;
/** `<24 hex>[.partial][.gz|.br|.zst][.enc]`: how the engine names an archived piece (docs/pitr.md). */
const PIECE = /^([0-9A-F]{24})(\.partial)?(\.gz|\.br|\.zst)?(\.enc)?$/;
const missing = (message) => new KitError(EXIT.missingWal, message);
const hex8 = (value) => value.toString(16).toUpperCase().padStart(8, '0');

/** WAL naming for one segment size: `TTTTTTTT` timeline, then the segment number as log id and segment in it. */
export class WalNames {
  constructor(segmentBytes = DEFAULT_SEGMENT_BYTES) {
    this.segmentBytes = segmentBytes;
    this.perLog = FOUR_GIB / segmentBytes;
  }

  /** The segment number of a name (timeline aside), or null for a name that is no segment of this size. */
  sequence(name) {
    const segment = Number.parseInt(name.slice(16, 24), 16);
    return segment >= this.perLog ? null : Number.parseInt(name.slice(8, 16), 16) * this.perLog + segment;
  }

  name(timeline, sequence) {
    return `${hex8(timeline)}${hex8(Math.floor(sequence / this.perLog))}${hex8(sequence % this.perLog)}`;
  }

  /** The segment holding LSN `X/Y`. */
  sequenceOfPosition(position) {
    const [high, low] = position.split('/').map((part) => BigInt(`0x${part}`));
    return Number((high * BigInt(FOUR_GIB) + low) / BigInt(this.segmentBytes));
  }
}

/** `X/Y` as a BigInt, or undefined when it is not an LSN. */
export function positionValue(position) {
  const match = /^([0-9A-F]{1,8})\/([0-9A-F]{1,8})$/i.exec(String(position).trim());
  return match ? BigInt(`0x${match[1]}`) * BigInt(FOUR_GIB) + BigInt(`0x${match[2]}`) : undefined;
}

/**
 * Every archived piece below `folder` (the downloaded `wal/` folder, its timeline folders, or a flat folder of the
 * objects) on `timeline`: per segment name its completed object and its partial, if any. Other files are counted.
 */
export function scanWalFolder(folder, timeline) {
  const stat = statSync(folder, { throwIfNoEntry: false });
  if (!stat?.isDirectory()) throw new KitError(EXIT.io, `--wal ${folder} is not a folder`);
  const pieces = new Map();
  let ignored = 0;
  const visit = (dir, depth) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && depth < 3) visit(path, depth + 1);
      else if (!entry.isFile()) ignored += 1;
      else {
        const match = PIECE.exec(entry.name);
        if (!match || Number.parseInt(match[1].slice(0, 8), 16) !== timeline) {
          ignored += 1;
          continue;
        }
        const piece = pieces.get(match[1]) ?? {};
        const slot = match[2] ? 'partial' : 'complete';
        // Two copies of one piece (say, from two destinations' folders): the newer file wins, as the engine rewrites partials in place.
        if (!piece[slot] || statSync(piece[slot]).mtimeMs < statSync(path).mtimeMs) piece[slot] = path;
        pieces.set(match[1], piece);
      }
    }
  };
  visit(folder, 0);
  return { pieces, ignored };
}

/**
 * The pieces to restore, in order from `startSegment`: each name's completed segment, else (only for the newest name
 * of all) its partial. Stops after `lastSequence` when given (an LSN target needs nothing beyond). Refuses a missing
 * start segment and any hole before the newest piece.
 */
export function planWal(pieces, { startSegment, timeline, names, lastSequence }) {
  const start = names.sequence(startSegment);
  const sequences = [...pieces.keys()].map((name) => names.sequence(name)).filter((sequence) => sequence !== null && sequence >= start);
  const newest = Math.max(start, ...sequences);
  const end = lastSequence === undefined ? newest : Math.min(newest, lastSequence);
  const plan = [];
  const holes = [];
  for (let sequence = start; sequence <= end; sequence += 1) {
    const name = names.name(timeline, sequence);
    const piece = pieces.get(name);
    if (piece?.complete) plan.push({ name, path: piece.complete, partial: false });
    else if (piece?.partial && sequence === newest) plan.push({ name, path: piece.partial, partial: true });
    else holes.push(piece?.partial ? `${name} (only its partial is here; the completed segment is missing)` : name);
  }
  if (plan.length === 0 || plan[0].name !== startSegment) {
    throw missing(`the WAL segment ${startSegment}, where the base backup starts, is not in the --wal folder: download pitr/<job id>/wal/ of the destination (the whole folder)`);
  }
  if (holes.length > 0) {
    const shown = holes.length > 5 ? [...holes.slice(0, 5), `… ${holes.length - 5} more`] : holes;
    throw missing(
      `WAL is missing between ${startSegment} and ${names.name(timeline, end)}: ${shown.join(', ')}. Download them; if the archive ` +
        'itself has a gap (the job showed one), only instants before it can be restored from this base: remove the objects after the gap',
    );
  }
  return plan;
}

/** The segment size and system identifier a WAL segment's first page (its long header) records. */
export function readSegmentHeader(file) {
  const page = Buffer.alloc(40);
  const handle = openSync(file, 'r');
  try {
    if (readSync(handle, page, 0, page.length, 0) < page.length) throw new KitError(EXIT.damaged, `${file} is too short to be a WAL segment`);
  } finally {
    closeSync(handle);
  }
  const isLongHeader = (page.readUInt16LE(2) & 0x0002) !== 0;
  if (!isLongHeader) throw new KitError(EXIT.damaged, `${file} does not start like a WAL segment (no long page header)`);
  return { systemId: page.subarray(24, 32), segmentBytes: page.readUInt32LE(32) };
}

/** Decrypts and decompresses one piece to `<dir>/<segment name>` (through a side file, renamed once complete). */
export async function restorePiece(piece, dir, key) {
  const codec = codecOfName(piece.path);
  ensureDecoder(codec);
  const target = join(dir, piece.name);
  const side = `${target}.partial-download`;
  try {
    await decodeFile(piece.path, { key, codec, sink: createWriteStream(side, { mode: 0o600, flags: 'wx' }), label: piece.path });
    await rename(side, target);
  } catch (error) {
    await rm(side, { force: true });
    throw error;
  }
  return target;
}

/**
 * A restored segment must be exactly one segment long. A partial is stored zero-padded to the full size, as
 * pg_receivewal writes it; a shorter one is padded here with zeros (where replay ends), which PostgreSQL needs.
 */
export async function checkSegmentSize(file, segmentBytes, isPartial) {
  const handle = await open(file, 'r+');
  try {
    const { size } = await handle.stat();
    if (isPartial && size < segmentBytes) await handle.truncate(segmentBytes);
    else if (size !== segmentBytes) throw new KitError(EXIT.damaged, `${file} is ${size} bytes; a WAL segment of this cluster is ${segmentBytes}`);
  } finally {
    await handle.close();
  }
}
