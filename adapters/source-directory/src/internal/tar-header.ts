import { encode, encodePax } from 'tar-stream/headers.js';

/** One entry's header as the directory source writes it. */
export interface TarHeader {
  name: string;
  type: 'file' | 'directory' | 'symlink';
  size: number;
  mode: number;
  uid: number;
  gid: number;
  mtime: Date;
  linkname?: string;
  /** Present (empty) to force a PAX header, as for a non-ASCII link target. */
  pax?: Record<string, string>;
}

const ZEROS = Buffer.alloc(512);

/** Zero bytes that fill the last 512-byte block of a body of `size` bytes. */
export function paddingOf(size: number): number {
  const rest = size % 512;
  return rest === 0 ? 0 : 512 - rest;
}

/**
 * The header block(s) of one entry, byte for byte what tar-stream 3's `pack.entry` writes for the same header (its
 * defaults too: mode 0 becomes 0644 for files and 0755 for folders, a symlink's size is 0), so archives written by
 * this source do not change with how it writes them: a ustar header, or for a long or non-ASCII name a PAX header
 * (`PaxHeader`, its records padded to a block) followed by the ustar header.
 */
export function encodeHeader(input: TarHeader): Buffer {
  const header = { ...input };
  if (!header.size || header.type === 'symlink') header.size = 0;
  if (!header.mode) header.mode = header.type === 'directory' ? 0o755 : 0o644;
  if (!header.pax) {
    const block = encode(header);
    if (block) return block;
  }
  const records = encodePax({ name: header.name, linkname: header.linkname, pax: header.pax });
  const paxHeader = { ...header, name: 'PaxHeader', size: records.length, type: 'pax-header', linkname: header.linkname && 'PaxHeader' };
  const first = encode(paxHeader)!;
  const last = encode({ ...paxHeader, size: header.size, type: header.type })!;
  return Buffer.concat([first, records, ZEROS.subarray(0, paddingOf(records.length)), last]);
}
