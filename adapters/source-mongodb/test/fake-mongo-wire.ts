/**
 * Wire codec of the FAKE MongoDB server (tests only), after the MongoDB wire protocol documentation
 * (https://www.mongodb.com/docs/manual/reference/mongodb-wire-protocol/): the standard message header, OP_MSG (2013)
 * with section kinds 0 and 1, and the legacy OP_QUERY (2004) / OP_REPLY (1) pair the driver uses for its first
 * `hello`/`isMaster`. BSON through the driver's own `bson`.
 */
import { BSON, type Document } from 'mongodb';

export const OP_REPLY = 1;
export const OP_QUERY = 2004;
export const OP_MSG = 2013;

/** Decoding that keeps every BSON type as sent (Int32 stays Int32...), for stored documents. */
export const EXACT = { promoteLongs: false, promoteValues: false, promoteBuffers: false, bsonRegExp: true } as const;

export interface Request {
  requestId: number;
  opCode: number;
  /** The command document (OP_MSG body, or the OP_QUERY query), decoded with promoted values. */
  body: Document;
  /** The same body decoded exactly, plus kind-1 sections by identifier (e.g. `documents`), decoded exactly. */
  exact: Document;
  sequences: Record<string, Document[]>;
  /** OP_QUERY only: the namespace, e.g. `admin.$cmd`. */
  namespace?: string;
}

function readCString(buffer: Buffer, at: number): [string, number] {
  const end = buffer.indexOf(0, at);
  return [buffer.toString('utf8', at, end), end + 1];
}

/** Decodes one complete message (header included). */
export function decodeMessage(message: Buffer): Request {
  const requestId = message.readInt32LE(4);
  const opCode = message.readInt32LE(12);
  if (opCode === OP_QUERY) {
    let at = 20;
    const [namespace, next] = readCString(message, at);
    at = next + 8; // numberToSkip, numberToReturn
    const size = message.readInt32LE(at);
    const raw = message.subarray(at, at + size);
    return { requestId, opCode, namespace, body: BSON.deserialize(raw), exact: BSON.deserialize(raw, EXACT), sequences: {} };
  }
  if (opCode !== OP_MSG) throw new Error(`fake mongo: unsupported opCode ${opCode}`);
  const flags = message.readUInt32LE(16);
  const end = message.length - (flags & 1 ? 4 : 0); // checksumPresent
  let at = 20;
  let body: Document = {};
  let exact: Document = {};
  const sequences: Record<string, Document[]> = {};
  while (at < end) {
    const kind = message[at]!;
    at += 1;
    if (kind === 0) {
      const size = message.readInt32LE(at);
      body = BSON.deserialize(message.subarray(at, at + size));
      exact = BSON.deserialize(message.subarray(at, at + size), EXACT);
      at += size;
    } else {
      const size = message.readInt32LE(at);
      const stop = at + size;
      const [identifier, next] = readCString(message, at + 4);
      const docs: Document[] = [];
      for (let p = next; p < stop; ) {
        const docSize = message.readInt32LE(p);
        docs.push(BSON.deserialize(message.subarray(p, p + docSize), EXACT));
        p += docSize;
      }
      sequences[identifier] = docs;
      at = stop;
    }
  }
  return { requestId, opCode, body, exact, sequences };
}

let nextId = 1;

function header(length: number, responseTo: number, opCode: number): Buffer {
  const head = Buffer.alloc(16);
  head.writeInt32LE(length, 0);
  head.writeInt32LE(nextId++, 4);
  head.writeInt32LE(responseTo, 8);
  head.writeInt32LE(opCode, 12);
  return head;
}

/** The reply to a request, in the request's own protocol (OP_REPLY for OP_QUERY, OP_MSG otherwise). */
export function encodeReply(request: Request, reply: Document): Buffer {
  const doc = Buffer.from(BSON.serialize(reply));
  if (request.opCode === OP_QUERY) {
    const fixed = Buffer.alloc(20); // responseFlags, cursorID (int64), startingFrom, numberReturned
    fixed.writeInt32LE(1, 16);
    return Buffer.concat([header(16 + 20 + doc.length, request.requestId, OP_REPLY), fixed, doc]);
  }
  const sections = Buffer.concat([Buffer.alloc(4), Buffer.from([0]), doc]); // flagBits 0, kind 0 body
  return Buffer.concat([header(16 + sections.length, request.requestId, OP_MSG), sections]);
}

/** Splits a TCP byte stream into complete messages. */
export class MessageSplitter {
  private buffer = Buffer.alloc(0);

  push(chunk: Buffer): Buffer[] {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    const out: Buffer[] = [];
    while (this.buffer.length >= 4 && this.buffer.length >= this.buffer.readInt32LE(0)) {
      const size = this.buffer.readInt32LE(0);
      out.push(this.buffer.subarray(0, size));
      this.buffer = this.buffer.subarray(size);
    }
    return out;
  }
}
