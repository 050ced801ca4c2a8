// The credit-based flow control of agent call streams (docs/agents.md "Protocol"): a slow reader slows the sender,
// neither side holds more than its window plus its stream buffer, and a sender that overruns its credit is caught.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CreditedReadable, CreditedSender, DATA_CHUNK_BYTES, STREAM_WINDOW_BYTES } from '../src/protocol.js';

describe('credit-based stream flow control', () => {
  it('moves 48 MiB to a slow reader with never more than the window plus the buffer in between', async () => {
    const total = 48 * 1024 * 1024;
    let produced = 0;
    let consumed = 0;
    let sent = 0;
    let largestGap = 0;
    let largestFrame = 0;
    // The sender's source: produced lazily, 1 MiB at a time.
    const source = Readable.from(
      (function* () {
        while (produced < total) {
          produced += 1024 * 1024;
          yield Buffer.alloc(1024 * 1024, produced % 251);
        }
      })(),
    );
    const link: { sender?: CreditedSender } = {};
    // Frames cross "the network" asynchronously, as on a socket.
    const receiver = new CreditedReadable((bytes) => setImmediate(() => link.sender!.grant(bytes)));
    const sender = new CreditedSender((bytes) => {
      sent += bytes.length;
      largestFrame = Math.max(largestFrame, bytes.length);
      const copy = Buffer.from(bytes);
      setImmediate(() => expect(receiver.accept(copy)).toBe(true));
    });
    link.sender = sender;
    receiver.open();
    const sending = sender.send(source).then(() => setImmediate(() => receiver.finish()));
    for await (const chunk of receiver) {
      consumed += (chunk as Buffer).length;
      largestGap = Math.max(largestGap, produced - consumed);
      // A slow reader: a pause every 256 KiB.
      if (consumed % (256 * 1024) < (chunk as Buffer).length) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    await sending;
    expect(consumed).toBe(total);
    expect(sent).toBe(total);
    expect(largestFrame).toBeLessThanOrEqual(DATA_CHUNK_BYTES);
    // In flight plus the reader's buffer plus one source chunk: about 3 MiB, far from the 48 MiB sent.
    expect(largestGap).toBeLessThanOrEqual(2 * STREAM_WINDOW_BYTES + 2 * 1024 * 1024);
  }, 60_000);

  it('refuses bytes beyond the credit granted, and a failed sender stops', async () => {
    const grants: number[] = [];
    const receiver = new CreditedReadable((bytes) => grants.push(bytes), 1024);
    receiver.open();
    expect(grants).toEqual([1024]);
    // Nobody reads: the buffer is full after the window, no credit comes back, one byte more is an overrun.
    expect(receiver.accept(Buffer.alloc(1024))).toBe(true);
    expect(grants).toEqual([1024]);
    expect(receiver.accept(Buffer.alloc(1))).toBe(false);

    const sender = new CreditedSender(() => undefined);
    const sending = sender.send(Readable.from([Buffer.alloc(10)]));
    sender.fail(new Error('interrupted: agent "x" disconnected during dump'));
    await expect(sending).rejects.toThrow('interrupted');
  });
});
