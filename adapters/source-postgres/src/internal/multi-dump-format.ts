/**
 * The Holdfast PostgreSQL multi-database dump: several `pg_dump -Fc` outputs in one stream, framed so each can be
 * split off again without knowing sizes in advance. Layout (all integers big-endian):
 *
 *   magic "HFPGMULTI\n" (10 bytes), version byte 0x01, or 0x02 when the archive carries cluster globals
 *   repeated: frame type (1 byte) + payload length (uint32) + payload
 *     'G' (version 2 only, before any 'D') globals header, payload = UTF-8 JSON {"serverVersion": "<version>"};
 *         its 'C' frames are the SQL text of `pg_dumpall --globals-only`, ended by 'E'
 *     'D' database header, payload = UTF-8 JSON {"name": "<database>", "serverVersion"?: "<version>"}
 *     'C' chunk of the current database's pg_dump output (at most 1 MiB)
 *     'E' end of the current database (or of the globals), empty payload
 *     'Z' end of archive, payload = UTF-8 JSON {"databases": <count>, "globals"?: true}
 *
 * A stream that ends without 'Z' is truncated. Documented in docs/formats/postgres-multi-dump.md (version 1) and
 * docs/formats/postgres-multi-dump-globals.md (what version 2 adds).
 */
export const MULTI_MAGIC = Buffer.from('HFPGMULTI\n', 'latin1');
export const MULTI_VERSION = 1;
/** The version written when the archive starts with the cluster globals ('G'); readers accept both. */
export const MULTI_VERSION_GLOBALS = 2;
export const MAX_CHUNK = 1024 * 1024;

/** Frame types of the multi-dump format. */
export type FrameType = 'G' | 'D' | 'C' | 'E' | 'Z';

/** Encodes one frame. */
export function encodeFrame(type: FrameType, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

/** The archive preamble. */
export function encodePreamble(version: number = MULTI_VERSION): Buffer {
  return Buffer.concat([MULTI_MAGIC, Buffer.from([version])]);
}

/** True when `head` starts like a multi-dump. */
export function isMultiDump(head: Buffer): boolean {
  return head.subarray(0, MULTI_MAGIC.length).equals(MULTI_MAGIC);
}

/** A decoded frame. */
export interface Frame {
  type: FrameType;
  payload: Buffer;
}

/** Incremental frame parser: feed bytes, take complete frames. Holds at most one partial frame. */
export class FrameReader {
  private buffered: Buffer[] = [];
  private length = 0;
  private preambleRead = false;
  /** The archive's format version, known once the preamble is read. */
  version: number | undefined;

  push(chunk: Buffer): Frame[] {
    this.buffered.push(chunk);
    this.length += chunk.length;
    const frames: Frame[] = [];
    let data = Buffer.concat(this.buffered, this.length);
    if (!this.preambleRead) {
      if (data.length < MULTI_MAGIC.length + 1) return this.keep(data, frames);
      if (!isMultiDump(data)) throw new Error('not a Holdfast multi-database dump (bad magic)');
      const version = data[MULTI_MAGIC.length];
      if (version !== MULTI_VERSION && version !== MULTI_VERSION_GLOBALS) throw new Error(`unsupported multi-dump version ${String(version)}`);
      this.version = version;
      data = data.subarray(MULTI_MAGIC.length + 1);
      this.preambleRead = true;
    }
    while (data.length >= 5) {
      const type = String.fromCharCode(data[0]!) as FrameType;
      // 'G' exists from version 2 on: in a version 1 archive it is corruption like any unknown byte.
      if (!(this.version === MULTI_VERSION_GLOBALS ? 'GDCEZ' : 'DCEZ').includes(type)) throw new Error(`corrupt multi-dump: unknown frame type 0x${data[0]!.toString(16)}`);
      const size = data.readUInt32BE(1);
      if (size > MAX_CHUNK) throw new Error(`corrupt multi-dump: frame of ${size} bytes exceeds the limit`);
      if (data.length < 5 + size) break;
      frames.push({ type, payload: Buffer.from(data.subarray(5, 5 + size)) });
      data = data.subarray(5 + size);
    }
    return this.keep(data, frames);
  }

  private keep(rest: Buffer, frames: Frame[]): Frame[] {
    this.buffered = rest.length > 0 ? [Buffer.from(rest)] : [];
    this.length = rest.length;
    return frames;
  }

  /** Bytes left over that did not form a frame (non-zero at end of input means truncation). */
  get pendingBytes(): number {
    return this.length;
  }
}
