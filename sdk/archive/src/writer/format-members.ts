import { createHash } from 'node:crypto';
import { INDEX_PATH, MANIFEST_PATH, PAX, TRAILER_PATH } from '../format/constants.js';
import type { IndexFileBytes } from '../format/index-file.js';
import type { ArchiveManifest } from '../format/index-schema.js';
import { BLOCK_SIZE, encodeTarHeader, paddingFor, TYPE_FLAG, type TarHeader } from '../format/tar-header.js';
import { encodeTrailerText } from '../format/trailer.js';
import type { ArchiveOutput } from './output.js';

/** Writes the manifest, the archive's first member. */
export async function writeManifest(output: ArchiveOutput, manifest: ArchiveManifest, createdAt: Date): Promise<void> {
  const bytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`, 'utf8');
  await output.append(encodeTarHeader(formatHeader(MANIFEST_PATH, bytes.length, createdAt, 'manifest')));
  await output.append(bytes);
  await output.append(Buffer.alloc(paddingFor(bytes.length)));
}

/**
 * Writes the index member, then the trailer and the end-of-archive blocks: together exactly the fixed-size tail
 * readers look for (trailer header, one trailer data block, two zero blocks).
 */
export async function writeIndexAndTrailer(output: ArchiveOutput, indexFile: IndexFileBytes, isSealed: boolean, createdAt: Date): Promise<void> {
  await output.append(encodeTarHeader(formatHeader(INDEX_PATH, indexFile.length, createdAt, 'index')));
  const indexOffset = output.position;
  // In pieces, like any member's data, and produced as they are written: a 15 MB index handed over whole would make
  // every stage downstream (encryption, upload) produce its whole output at once, and held whole it is 15 MB more.
  const hash = createHash('sha256');
  for (const piece of indexFile.chunks()) {
    hash.update(piece);
    await output.append(piece);
  }
  if (output.position - indexOffset !== indexFile.length) {
    throw new Error(`the index member has ${output.position - indexOffset} bytes, its header says ${indexFile.length}`);
  }
  await output.append(Buffer.alloc(paddingFor(indexFile.length)));
  const trailer = encodeTrailerText({
    indexOffset,
    indexLength: indexFile.length,
    indexSha256: hash.digest('hex'),
    isIndexSealed: isSealed,
  });
  // No role key here: the trailer must stay a single ustar block (no pax header) for the tail to have a fixed size.
  await output.append(encodeTarHeader(formatHeader(TRAILER_PATH, trailer.length, createdAt)));
  await output.append(Buffer.concat([trailer, Buffer.alloc(paddingFor(trailer.length) + 2 * BLOCK_SIZE)]));
}

function formatHeader(path: string, size: number, createdAt: Date, role?: string): TarHeader {
  return {
    name: path,
    mode: 0o644,
    uid: 0,
    gid: 0,
    size,
    mtime: String(Math.floor(createdAt.getTime() / 1000)),
    typeFlag: TYPE_FLAG.file,
    linkName: '',
    uname: '',
    gname: '',
    pax: role ? { [PAX.role]: role } : {},
  };
}
