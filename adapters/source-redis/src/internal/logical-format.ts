/**
 * The Holdfast Redis logical stream, version 1 (documented in the package README). All integers big-endian.
 *
 *   magic "HFREDIS\n" (8 bytes), version byte 0x01
 *   repeated frames: type (1 ASCII byte) + payload length (uint32) + payload
 *     'H' header, UTF-8 JSON {"format":"holdfast-redis-logical","version":1,"server":{...},"createdAt":"<ISO>"}
 *     'D' database section start, UTF-8 JSON {"db": <index>}; the keys that follow belong to it
 *     'K' key: key length (uint32) + key bytes + expire-at (int64 unix ms, -1 = no expiry) + DUMP payload
 *     'Z' end of stream, UTF-8 JSON {"keys": <count>, "databases": [<index>, ...]}
 *
 * A stream without 'Z' is truncated. The DUMP payload is Redis's own serialisation (it carries an RDB version and
 * a CRC64); RESTORE refuses payloads from a newer RDB version than the target server understands.
 */
export const LOGICAL_MAGIC = Buffer.from('HFREDIS\n', 'latin1');
export const LOGICAL_VERSION = 1;
/** Redis caps a string at 512 MiB; a DUMP payload can be somewhat larger. */
export const MAX_FRAME = 1024 * 1024 * 1024;

/** Frame types. */
export type FrameType = 'H' | 'D' | 'K' | 'Z';

/** One decoded key. */
export interface KeyRecord {
  key: Buffer;
  /** Unix ms when the key expires, or -1. */
  expireAt: number;
  payload: Buffer;
}

/** A decoded frame. */
export type Frame = { type: 'H' | 'D' | 'Z'; json: Record<string, unknown> } | { type: 'K'; record: KeyRecord };

function frame(type: FrameType, payload: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

/** The stream preamble. */
export function encodePreamble(): Buffer {
  return Buffer.concat([LOGICAL_MAGIC, Buffer.from([LOGICAL_VERSION])]);
}

/** A JSON frame ('H', 'D', 'Z'). */
export function encodeJson(type: 'H' | 'D' | 'Z', value: Record<string, unknown>): Buffer {
  return frame(type, Buffer.from(JSON.stringify(value), 'utf8'));
}

/** A key frame. */
export function encodeKey(record: KeyRecord): Buffer {
  const fixed = Buffer.alloc(12);
  fixed.writeUInt32BE(record.key.length, 0);
  fixed.writeBigInt64BE(BigInt(record.expireAt), 4);
  const body = Buffer.concat([fixed.subarray(0, 4), record.key, fixed.subarray(4), record.payload]);
  return frame('K', body);
}

/** True when `head` starts like a logical stream. */
export function isLogicalStream(head: Buffer): boolean {
  return head.subarray(0, LOGICAL_MAGIC.length).equals(LOGICAL_MAGIC);
}

function decodeFrame(type: string, payload: Buffer): Frame {
  if (type === 'K') {
    const keyLength = payload.readUInt32BE(0);
    const key = payload.subarray(4, 4 + keyLength);
    const expireAt = Number(payload.readBigInt64BE(4 + keyLength));
    return { type, record: { key, expireAt, payload: payload.subarray(12 + keyLength) } };
  }
  if (type === 'H' || type === 'D' || type === 'Z') return { type, json: JSON.parse(payload.toString('utf8')) as Record<string, unknown> };
  throw new Error(`corrupt logical stream: unknown frame type 0x${Buffer.from(type, 'latin1').toString('hex')}`);
}

/**
 * Incremental parser: feed chunks, take complete frames. A large frame is gathered as a list of chunks and joined
 * once, so a big value costs one copy, not one per chunk.
 */
export class FrameReader {
  private chunks: Buffer[] = [];
  private length = 0;
  private isPreambleRead = false;

  push(chunk: Buffer): Frame[] {
    this.chunks.push(chunk);
    this.length += chunk.length;
    const frames: Frame[] = [];
    for (;;) {
      if (!this.isPreambleRead) {
        if (this.length < LOGICAL_MAGIC.length + 1) return frames;
        const head = this.take(LOGICAL_MAGIC.length + 1);
        if (!isLogicalStream(head)) throw new Error('not a Holdfast Redis logical stream (bad magic)');
        if (head[LOGICAL_MAGIC.length] !== LOGICAL_VERSION) throw new Error(`unsupported logical stream version ${String(head[LOGICAL_MAGIC.length])}`);
        this.isPreambleRead = true;
      }
      if (this.length < 5) return frames;
      const head = this.peek(5);
      const size = head.readUInt32BE(1);
      if (size > MAX_FRAME) throw new Error(`corrupt logical stream: frame of ${size} bytes exceeds the limit`);
      if (this.length < 5 + size) return frames;
      this.take(5);
      frames.push(decodeFrame(String.fromCharCode(head[0]!), this.take(size)));
    }
  }

  /** Bytes left over that did not form a frame (non-zero at the end of input means truncation). */
  get pendingBytes(): number {
    return this.length;
  }

  private peek(size: number): Buffer {
    if (this.chunks[0]!.length < size) this.chunks = [Buffer.concat(this.chunks)];
    return this.chunks[0]!.subarray(0, size);
  }

  private take(size: number): Buffer {
    const joined = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
    const taken = Buffer.from(joined.subarray(0, size));
    const rest = joined.subarray(size);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.length -= size;
    return taken;
  }
}
