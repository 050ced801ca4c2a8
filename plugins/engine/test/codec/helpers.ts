// Small stream helpers for the codec tests. Buffers are fine here: test payloads are a few MiB at most, except
// in the memory test, which streams instead.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable, type Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createDecryptStream } from '../../src/codec/encryption/decrypt-stream.js';
import { createEncryptStream } from '../../src/codec/encryption/encrypt-stream.js';

/** Feeds `input` in pieces of `pieceSize` bytes (so chunk boundaries fall inside writes) and collects the output. */
export async function runThrough(transform: Transform, input: Buffer, pieceSize = 7_919): Promise<Buffer> {
  const pieces: Buffer[] = [];
  for (let offset = 0; offset < input.length; offset += pieceSize) pieces.push(input.subarray(offset, offset + pieceSize));
  const output: Buffer[] = [];
  await pipeline(
    Readable.from(pieces),
    transform,
    new Writable({
      write(chunk: Buffer, _encoding, callback) {
        output.push(chunk);
        callback();
      },
    }),
  );
  return Buffer.concat(output);
}

/** Runs `input` through the transform and returns what came out before the error, and the error. */
export async function runUntilError(transform: Transform, input: Buffer): Promise<{ output: Buffer; error: unknown }> {
  const output: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      output.push(chunk);
      callback();
    },
  });
  const error = await pipeline(Readable.from(input.length ? [input] : []), transform, sink).then(
    () => undefined,
    (failure: unknown) => failure,
  );
  return { output: Buffer.concat(output), error };
}

/** Encrypts a buffer with a fresh salt and nonce prefix. */
export function encrypt(key: Buffer, plaintext: Buffer, chunkSize?: number): Promise<Buffer> {
  return runThrough(createEncryptStream({ key, chunkSize }), plaintext);
}

/** Decrypts a buffer, or rejects with the DecryptError. */
export function decrypt(key: Buffer, file: Buffer): Promise<Buffer> {
  return runThrough(createDecryptStream({ key }), file);
}

/** A fresh temporary directory and its removal. */
export async function makeTempDir(): Promise<{ path: string; remove: () => Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), 'holdfast-engine-codec-'));
  return { path, remove: () => rm(path, { recursive: true, force: true }) };
}

/**
 * Byte-for-byte comparison. `toEqual` walks Buffers element by element and takes seconds per MiB; this compares
 * natively and, on a mismatch, reports the first differing offset instead of dumping megabytes.
 */
export function firstDifference(actual: Buffer, expected: Buffer): string {
  if (actual.equals(expected)) return 'identical';
  const limit = Math.min(actual.length, expected.length);
  let offset = 0;
  while (offset < limit && actual[offset] === expected[offset]) offset++;
  return `differ at byte ${offset} (lengths ${actual.length} and ${expected.length})`;
}

// The vectors are read from the format document itself, so the document and the code cannot drift apart.
export interface VectorDocument {
  profileKeyHex: string;
  saltHex: string;
  noncePrefixHex: string;
  chunkSize: number;
  keyFingerprintHex: string;
  dataKeyHex: string;
  vectors: { name: string; plaintext: string; ciphertextHex: string }[];
}

/** The JSON block under "## Test vectors" of docs/formats/encryption.md. */
export async function readVectors(): Promise<VectorDocument> {
  const doc = await readFile(new URL('../../../../docs/formats/encryption.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('## Test vectors'));
  const block = /```json\n([\s\S]*?)\n```/.exec(section);
  if (!block?.[1]) throw new Error('docs/formats/encryption.md has no JSON block under "## Test vectors"');
  return JSON.parse(block[1]) as VectorDocument;
}
