import type { Socket } from 'node:net';

// MS-TDS 2.2.3.1: every message travels in packets with an 8-byte header (type, status, big-endian length including
// the header, SPID, packet id, window); status bit 0x01 marks the last packet of a message.

/** Packet types the fake handles (MS-TDS 2.2.3.1.1). */
export const PACKET = { SQL_BATCH: 0x01, RPC: 0x03, TABULAR_RESULT: 0x04, ATTENTION: 0x06, LOGIN7: 0x10, PRELOGIN: 0x12 } as const;

const HEADER = 8;
const END_OF_MESSAGE = 0x01;

/** Reassembles messages from the packets a client sends. */
export class MessageReader {
  private buffered = Buffer.alloc(0);
  private parts: Buffer[] = [];
  private messageType: number | undefined;

  constructor(private readonly onMessage: (type: number, payload: Buffer) => void) {}

  push(chunk: Buffer): void {
    this.buffered = Buffer.concat([this.buffered, chunk]);
    while (this.buffered.length >= HEADER) {
      const length = this.buffered.readUInt16BE(2);
      if (length < HEADER) throw new Error(`TDS packet with impossible length ${length}`);
      if (this.buffered.length < length) return;
      const type = this.buffered[0]!;
      const status = this.buffered[1]!;
      this.messageType ??= type;
      this.parts.push(this.buffered.subarray(HEADER, length));
      this.buffered = this.buffered.subarray(length);
      if (status & END_OF_MESSAGE) {
        const payload = Buffer.concat(this.parts);
        const messageType = this.messageType;
        this.parts = [];
        this.messageType = undefined;
        this.onMessage(messageType, payload);
      }
    }
  }
}

/** Sends one message, split into packets of at most `packetSize` bytes. */
export function sendMessage(socket: Socket, type: number, payload: Buffer, packetSize: number): void {
  const room = packetSize - HEADER;
  let packetId = 1;
  let offset = 0;
  do {
    const part = payload.subarray(offset, offset + room);
    offset += part.length;
    const header = Buffer.alloc(HEADER);
    header[0] = type;
    header[1] = offset >= payload.length ? END_OF_MESSAGE : 0;
    header.writeUInt16BE(HEADER + part.length, 2);
    header.writeUInt16BE(0x33, 4); // SPID of the fake session
    header[6] = packetId++ % 256;
    socket.write(Buffer.concat([header, part]));
  } while (offset < payload.length);
}
