import { ArchiveFormatError } from '../errors.js';
import { BLOCK_SIZE, decodeUstarBlock, isZeroBlock } from './tar-header.js';
import { TAIL_SIZE, TRAILER_PATH } from './constants.js';

/** Where the index member's data sits, so a reader finds it with one fixed-size read of the archive's tail. */
export interface Trailer {
  indexOffset: number;
  indexLength: number;
  /** Hex SHA-256 of the stored index bytes (sealed bytes when sealed). */
  indexSha256: string;
  isIndexSealed: boolean;
}

/** The trailer member's text; one line per field so a person can read it with `tar -xOf archive .holdfast/trailer`. */
export function encodeTrailerText(trailer: Trailer): Buffer {
  return Buffer.from(
    [
      'holdfast-archive-trailer 1',
      `index-offset ${trailer.indexOffset}`,
      `index-length ${trailer.indexLength}`,
      `index-sha256 ${trailer.indexSha256}`,
      `index-sealed ${trailer.isIndexSealed ? 1 : 0}`,
      '',
    ].join('\n'),
    'ascii',
  );
}

/** Parses the last {@link TAIL_SIZE} bytes of an archive. */
export function decodeTail(tail: Buffer): Trailer {
  if (tail.length !== TAIL_SIZE) throw new ArchiveFormatError(`archive tail must be ${TAIL_SIZE} bytes, got ${tail.length}`);
  if (!isZeroBlock(tail.subarray(2 * BLOCK_SIZE))) {
    throw new ArchiveFormatError('the archive does not end with the trailer and two zero blocks (truncated or not a Holdfast archive)');
  }
  const header = decodeUstarBlock(tail.subarray(0, BLOCK_SIZE), {}, 0);
  if (header.name !== TRAILER_PATH || header.size > BLOCK_SIZE) {
    throw new ArchiveFormatError(`expected the ${TRAILER_PATH} member before the end of the archive, found "${header.name}"`);
  }
  const fields = new Map<string, string>();
  const lines = tail.subarray(BLOCK_SIZE, BLOCK_SIZE + header.size).toString('ascii').split('\n');
  if (lines[0] !== 'holdfast-archive-trailer 1') throw new ArchiveFormatError(`unknown trailer version "${lines[0]}"`);
  for (const line of lines.slice(1)) {
    const space = line.indexOf(' ');
    if (space > 0) fields.set(line.slice(0, space), line.slice(space + 1));
  }
  const integer = (key: string) => {
    const value = Number(fields.get(key));
    if (!Number.isSafeInteger(value) || value < 0) throw new ArchiveFormatError(`trailer field ${key} is missing or invalid`);
    return value;
  };
  const indexSha256 = fields.get('index-sha256') ?? '';
  if (!/^[0-9a-f]{64}$/.test(indexSha256)) throw new ArchiveFormatError('trailer field index-sha256 is missing or invalid');
  return {
    indexOffset: integer('index-offset'),
    indexLength: integer('index-length'),
    indexSha256,
    isIndexSealed: fields.get('index-sealed') === '1',
  };
}
