import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';

/** SHA-256 (hex) and length of everything a stream yields; consumes the stream. */
export async function sha256OfStream(stream: Readable | AsyncIterable<Buffer | string>): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    hash.update(buffer);
    bytes += buffer.length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** Reads a (small) stream into one Buffer; for range reads and fixtures, never for large payloads. */
export async function readAll(stream: Readable | AsyncIterable<Buffer | string>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream as AsyncIterable<Buffer | string>) {
    chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  }
  return Buffer.concat(chunks);
}
