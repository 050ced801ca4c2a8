import { describe, expect, it } from 'vitest';
import { failingAfterShare } from '../src/index.js';

describe('failingAfterShare', () => {
  it('yields the first share of the bytes in pieces of the asked size, then fails with the message', async () => {
    const bytes = Buffer.from(Array.from({ length: 1000 }, (_, index) => index % 251));
    const pieces: Buffer[] = [];
    await expect(
      (async () => {
        for await (const piece of failingAfterShare(bytes, 0.55, { pieceSize: 100, pauseMs: 1, message: 'bad file' })) pieces.push(piece as Buffer);
      })(),
    ).rejects.toThrow('bad file');
    expect(pieces.map((piece) => piece.length)).toEqual([100, 100, 100, 100, 100, 50]);
    expect(Buffer.concat(pieces)).toEqual(bytes.subarray(0, 550));
  });

  it('fails with "checksum mismatch" by default, after the pause', async () => {
    const started = Date.now();
    const stream = failingAfterShare(Buffer.alloc(40 * 1024), 1);
    let received = 0;
    await expect(
      (async () => {
        for await (const piece of stream) received += (piece as Buffer).length;
      })(),
    ).rejects.toThrow('checksum mismatch');
    expect(received).toBe(40 * 1024);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });
});
