/**
 * The Holdfast MongoDB export stream, version 1 (documented in the package README). All integers big-endian.
 *
 *   magic "HFMONGO\n" (8 bytes), version byte 0x01
 *   repeated frames: type (1 ASCII byte) + payload length (uint32) + payload
 *     'H' header      UTF-8 JSON {"format":"holdfast-mongodb","version":1,"server":{...},"createdAt":"<ISO>"}
 *     'B' database    UTF-8 JSON {"name": "<db>"}; the frames that follow belong to it
 *     'C' collection  UTF-8 canonical Extended JSON {"name","type","options","indexes":[...]}; its documents follow
 *     'D' document    one BSON document, exactly as the server returned it
 *     'U' users       UTF-8 canonical Extended JSON {"users":[...],"roles":[...]} of the current database
 *     'Z' end         UTF-8 JSON {"databases":[...],"collections":<n>,"documents":<n>}
 *
 * A stream without 'Z' is truncated and its restore fails.
 */
import { loadedBson } from './driver.js';

export const MAGIC = Buffer.from('HFMONGO\n', 'latin1');
export const FORMAT_VERSION = 1;
/** MongoDB caps a document at 16 MiB; metadata frames are far smaller. */
const MAX_FRAME = 64 * 1024 * 1024;

export type JsonFrameType = 'H' | 'B' | 'Z';
export type EjsonFrameType = 'C' | 'U';
export type Frame = { type: JsonFrameType | EjsonFrameType; json: Record<string, unknown> } | { type: 'D'; bson: Buffer };

function frame(type: string, payload: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeUInt32BE(payload.length, 1);
  return Buffer.concat([head, payload]);
}

export function encodePreamble(): Buffer {
  return Buffer.concat([MAGIC, Buffer.from([FORMAT_VERSION])]);
}

export function encodeJson(type: JsonFrameType, value: Record<string, unknown>): Buffer {
  return frame(type, Buffer.from(JSON.stringify(value), 'utf8'));
}

/** Collection and user frames keep BSON types (dates, longs, binary) through canonical Extended JSON. */
export function encodeEjson(type: EjsonFrameType, value: Record<string, unknown>): Buffer {
  return frame(type, Buffer.from(loadedBson().EJSON.stringify(value, { relaxed: false }), 'utf8'));
}

export function encodeDocument(bson: Buffer): Buffer {
  return frame('D', bson);
}

export function isExportStream(head: Buffer): boolean {
  return head.subarray(0, MAGIC.length).equals(MAGIC);
}

function decodeFrame(type: string, payload: Buffer): Frame {
  if (type === 'D') return { type, bson: payload };
  if (type === 'H' || type === 'B' || type === 'Z') return { type, json: JSON.parse(payload.toString('utf8')) as Record<string, unknown> };
  if (type === 'C' || type === 'U') return { type, json: loadedBson().EJSON.parse(payload.toString('utf8'), { relaxed: false }) as Record<string, unknown> };
  throw new Error(`corrupt export stream: unknown frame type 0x${Buffer.from(type, 'latin1').toString('hex')}`);
}

/** Incremental parser: feed chunks, take complete frames. */
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
        if (this.length < MAGIC.length + 1) return frames;
        const head = this.take(MAGIC.length + 1);
        if (!isExportStream(head)) throw new Error('not a Holdfast MongoDB export stream (bad magic)');
        if (head[MAGIC.length] !== FORMAT_VERSION) throw new Error(`unsupported export stream version ${String(head[MAGIC.length])}`);
        this.isPreambleRead = true;
      }
      if (this.length < 5) return frames;
      const head = this.take(5);
      const size = head.readUInt32BE(1);
      if (size > MAX_FRAME) throw new Error(`corrupt export stream: frame of ${size} bytes exceeds the limit`);
      if (this.length < size) {
        this.unshift(head);
        return frames;
      }
      frames.push(decodeFrame(String.fromCharCode(head[0]!), this.take(size)));
    }
  }

  get pendingBytes(): number {
    return this.length;
  }

  private unshift(head: Buffer): void {
    this.chunks.unshift(head);
    this.length += head.length;
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
