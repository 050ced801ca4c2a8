// The records sealed from one input piece leave the encrypt stream as one piece: every piece downstream costs a hash
// update, a fan-out write and a destination write, and two pieces per 64 KiB record (one of them a 16-byte tag) made
// an encrypted backup twice as slow as a plain one. The bytes are the same HFENC file either way.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createDecryptStream, createEncryptStream } from '../../src/codec/index.js';
import { runThrough } from './helpers.js';

describe('encrypt stream output pieces', () => {
  it('pushes one piece per input piece, however many records it seals, and the file decrypts', async () => {
    const key = randomBytes(32);
    const encrypt = createEncryptStream({ key });
    const pieces: Buffer[] = [];
    encrypt.on('data', (piece: Buffer) => pieces.push(piece));
    const ended = new Promise((resolve) => encrypt.on('end', resolve));
    const input = [randomBytes(1024 * 1024), randomBytes(1024 * 1024), randomBytes(100_000)];
    for (const piece of input) encrypt.write(piece);
    encrypt.end();
    await ended;
    // Header, then one piece per input write that completed records (the first write's last record waits for more
    // input), then the final record on flush.
    expect(pieces.length).toBeLessThanOrEqual(1 + input.length + 1);
    expect(pieces.length).toBeGreaterThanOrEqual(3);
    const decrypted = await runThrough(createDecryptStream({ key }), Buffer.concat(pieces));
    expect(decrypted.equals(Buffer.concat(input))).toBe(true);
  });
});
