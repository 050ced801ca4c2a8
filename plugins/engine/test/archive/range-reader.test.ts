// The archive range reader against real files on a local storage: plaintext ranges of plain and HFENC objects made by
// the engine's own encrypt stream, read with storage range reads and with the whole-object fallback.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Transform, pipeline } from 'node:stream';
import type { ByteRange, GetOptions, StorageAdapter } from '@holdfast/kernel';
import storageLocal from '@holdfast/storage-local';
import { createAdapterInstance } from '@holdfast/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArchiveRangeReader, type ArchiveRangeReader } from '../../src/archive/range-reader.js';
import { HEADER_LENGTH, TAG_LENGTH, keyFingerprint } from '../../src/codec/encryption/format.js';
import { encrypt, firstDifference } from '../codec/helpers.js';

const DEFAULT_CHUNK = 65_536;
const RECORD = DEFAULT_CHUNK + TAG_LENGTH;

/** mulberry32: a seeded generator, so a failing range can be replayed. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

function seededBytes(length: number, seed: number): Buffer {
  const random = seededRandom(seed);
  const bytes = Buffer.alloc(length);
  for (let i = 0; i < length; i++) bytes[i] = Math.floor(random() * 256);
  return bytes;
}

interface GetCall {
  range?: ByteRange;
  bytes: number;
  source: Readable;
}

/** The storage with `get` wrapped: records each call, the range asked for and the bytes that came out of it. */
function countingStorage(storage: StorageAdapter): { storage: StorageAdapter; calls: GetCall[] } {
  const calls: GetCall[] = [];
  const counted: StorageAdapter = {
    check: () => storage.check(),
    put: (key, body, options) => storage.put(key, body, options),
    list: (prefix, options) => storage.list(prefix, options),
    stat: (key) => storage.stat(key),
    delete: (key) => storage.delete(key),
    get: async (key: string, options?: GetOptions) => {
      const source = await storage.get(key, options);
      const call: GetCall = { range: options?.range, bytes: 0, source };
      calls.push(call);
      const counter = new Transform({
        transform(chunk: Buffer, _encoding, callback) {
          call.bytes += chunk.length;
          callback(null, chunk);
        },
      });
      // pipeline destroys the source when the counter is destroyed early, as a real destination stream would be.
      return pipeline(source, counter, () => undefined);
    },
  };
  return { storage: counted, calls };
}

/** Collects a stream, keeping what came out before a failure. */
async function collect(stream: Readable): Promise<{ output: Buffer; error: unknown }> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
    return { output: Buffer.concat(chunks), error: undefined };
  } catch (error) {
    return { output: Buffer.concat(chunks), error };
  }
}

async function readRange(reader: ArchiveRangeReader, start: number, end: number): Promise<Buffer> {
  const { output, error } = await collect(await reader.read(start, end));
  if (error) throw error;
  return output;
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

let root: string;
let storage: StorageAdapter;
const profileKey = seededBytes(32, 1);

async function store(key: string, bytes: Buffer): Promise<number> {
  await storage.put(key, Readable.from(bytes.length ? [bytes] : []));
  return (await storage.stat(key)).size;
}

interface ReaderChoice {
  store?: StorageAdapter;
  canRangeRead?: boolean;
  encryptionKey?: Buffer | null;
  signal?: AbortSignal;
}

async function readerOf(key: string, choice: ReaderChoice = {}): Promise<ArchiveRangeReader> {
  return createArchiveRangeReader({
    storage: choice.store ?? storage,
    canRangeRead: choice.canRangeRead ?? true,
    key,
    storedSize: (await storage.stat(key)).size,
    encryptionKey: choice.encryptionKey === undefined ? profileKey : choice.encryptionKey,
    signal: choice.signal,
  });
}

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'holdfast-engine-range-reader-'));
  storage = createAdapterInstance<StorageAdapter>(storageLocal, { path: root });
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

// Chunk sizes the format allows: its smallest, a small one, and the 64 KiB Holdfast writes. Plaintext lengths leave a
// partial last record, except the exact multiple, whose last record is full.
const CASES = [
  { chunkSize: 16, length: 1_000 },
  { chunkSize: 4_096, length: 50_001 },
  { chunkSize: DEFAULT_CHUNK, length: 300 * 1024 + 123 },
  { chunkSize: DEFAULT_CHUNK, length: 3 * DEFAULT_CHUNK },
];

describe.each(CASES)('encrypted, chunk size $chunkSize, $length bytes', ({ chunkSize, length }) => {
  const key = `encrypted-${chunkSize}-${length}.hfa.enc`;
  const plaintext = seededBytes(length, chunkSize + length);

  beforeAll(async () => {
    await store(key, await encrypt(profileKey, plaintext, chunkSize));
  });

  it('reports the plaintext size from the stored size', async () => {
    expect(await (await readerOf(key)).plaintextSize()).toBe(length);
  });

  it('returns 100 seeded random ranges byte for byte, with range reads and with the whole-object fallback', async () => {
    const random = seededRandom(chunkSize * 7 + length);
    const ranged = await readerOf(key);
    const whole = await readerOf(key, { canRangeRead: false });
    for (let i = 0; i < 100; i++) {
      const start = Math.floor(random() * length);
      // Half short (inside or across a record or two), half long.
      const span = i % 2 === 0 ? Math.floor(random() * 2 * chunkSize) : Math.floor(random() * (length - start));
      const end = Math.min(length - 1, start + span);
      const expected = plaintext.subarray(start, end + 1);
      expect(firstDifference(await readRange(ranged, start, end), expected), `range ${start}..${end}`).toBe('identical');
      expect(firstDifference(await readRange(whole, start, end), expected), `fallback ${start}..${end}`).toBe('identical');
    }
  });

  it('returns ranges that cross record boundaries', async () => {
    const reader = await readerOf(key);
    for (let boundary = chunkSize; boundary < length; boundary += chunkSize) {
      for (const [start, end] of [
        [boundary - 1, boundary],
        [Math.max(0, boundary - 5), Math.min(length - 1, boundary + 5)],
        [Math.max(0, boundary - chunkSize / 2), Math.min(length - 1, boundary + chunkSize + 3)],
      ] as const) {
        expect(firstDifference(await readRange(reader, start, end), plaintext.subarray(start, end + 1)), `${start}..${end}`).toBe('identical');
      }
    }
  });

  it('returns the first byte, the last byte and the whole object', async () => {
    const reader = await readerOf(key);
    expect(await readRange(reader, 0, 0)).toEqual(plaintext.subarray(0, 1));
    expect(await readRange(reader, length - 1, length - 1)).toEqual(plaintext.subarray(length - 1));
    expect(firstDifference(await readRange(reader, 0, length - 1), plaintext)).toBe('identical');
  });
});

describe('encrypted, what it fetches', () => {
  const key = 'fetch-bounds.hfa.enc';
  const plaintext = seededBytes(300 * 1024, 2);

  beforeAll(async () => {
    await store(key, await encrypt(profileKey, plaintext));
  });

  it('reads a 10-byte range across a record boundary with the header and the two records that hold it, the header once', async () => {
    const counted = countingStorage(storage);
    const reader = await readerOf(key, { store: counted.storage });
    const start = 2 * DEFAULT_CHUNK - 5;
    expect(await readRange(reader, start, start + 9)).toEqual(plaintext.subarray(start, start + 10));
    expect(counted.calls.map((call) => call.range)).toEqual([
      { start: 0, end: HEADER_LENGTH - 1 },
      { start: HEADER_LENGTH + RECORD, end: HEADER_LENGTH + 3 * RECORD - 1 },
    ]);
    expect(counted.calls.reduce((sum, call) => sum + call.bytes, 0)).toBeLessThanOrEqual(HEADER_LENGTH + 2 * RECORD);

    expect(await readRange(reader, 7, 7)).toEqual(plaintext.subarray(7, 8));
    expect(counted.calls.map((call) => call.range?.start)).toEqual([0, HEADER_LENGTH + RECORD, HEADER_LENGTH]);
  });

  it('without range reads, fetches whole objects but stops and destroys each once its range is delivered', async () => {
    const counted = countingStorage(storage);
    const reader = await readerOf(key, { store: counted.storage, canRangeRead: false });
    expect(await readRange(reader, 10, 20)).toEqual(plaintext.subarray(10, 21));
    await tick();
    expect(counted.calls.map((call) => call.range)).toEqual([undefined, undefined]);
    const storedSize = (await storage.stat(key)).size;
    for (const call of counted.calls) {
      expect(call.source.destroyed).toBe(true);
      expect(call.bytes).toBeLessThan(storedSize / 2);
    }
  });
});

describe('encrypted, memory', () => {
  const key = 'large.hfa.enc';
  const plaintext = seededBytes(4 * 1024 * 1024, 3);

  beforeAll(async () => {
    await store(key, await encrypt(profileKey, plaintext));
  });

  it('streams a whole-object range a few records at a time, and a consumer that stops destroys the storage stream', async () => {
    for (const canRangeRead of [true, false]) {
      const counted = countingStorage(storage);
      const reader = await readerOf(key, { store: counted.storage, canRangeRead });
      const output = await reader.read(0, plaintext.length - 1);
      const first = await new Promise<Buffer>((resolve) => output.once('data', resolve));
      output.pause();
      // Time enough to read all 4 MiB from a local file, if anything were reading ahead without bound.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(first).toEqual(plaintext.subarray(0, first.length));
      const records = counted.calls.at(-1) as GetCall;
      // Bounded by what the stream layers read ahead (about 64 KiB each), not by the 4 MiB asked for.
      expect(records.bytes, `canRangeRead ${canRangeRead}`).toBeLessThan(8 * RECORD);
      output.destroy();
      await tick();
      expect(records.source.destroyed).toBe(true);
    }
  });
});

describe('encrypted, failures', () => {
  const plaintext = seededBytes(300 * 1024, 4);
  let file: Buffer;

  beforeAll(async () => {
    file = await encrypt(profileKey, plaintext);
  });

  it('fails a stream on a flipped ciphertext byte, naming the record, and still reads the records around it', async () => {
    const tampered = Buffer.from(file);
    const flipped = HEADER_LENGTH + 2 * RECORD + 100;
    tampered.writeUInt8(tampered.readUInt8(flipped) ^ 0x01, flipped);
    await store('flipped.hfa.enc', tampered);
    const reader = await readerOf('flipped.hfa.enc');

    expect(await readRange(reader, 0, 999)).toEqual(plaintext.subarray(0, 1000));
    const across = await collect(await reader.read(DEFAULT_CHUNK + 10, 3 * DEFAULT_CHUNK + 10));
    expect(across.error).toMatchObject({ code: 'AUTH_FAILED', message: 'chunk 2 failed authentication' });
    // Record 1 was authentic and released; nothing of record 2 was.
    expect(across.output).toEqual(plaintext.subarray(DEFAULT_CHUNK + 10, 2 * DEFAULT_CHUNK));
    expect((await collect(await reader.read(3 * DEFAULT_CHUNK, 3 * DEFAULT_CHUNK + 5))).error).toBeUndefined();
  });

  it('rejects a wrong key with the fingerprint error before reading records', async () => {
    await store('wrong-key.hfa.enc', file);
    const otherKey = seededBytes(32, 99);
    const counted = countingStorage(storage);
    const reader = await readerOf('wrong-key.hfa.enc', { store: counted.storage, encryptionKey: otherKey });
    const expectedError = {
      code: 'WRONG_KEY',
      message: expect.stringContaining(`needs the key with fingerprint ${keyFingerprint(profileKey).toString('hex')}`) as string,
    };
    await expect(reader.read(0, 10)).rejects.toMatchObject(expectedError);
    await expect(reader.plaintextSize()).rejects.toMatchObject(expectedError);
    await expect(reader.read(0, 10)).rejects.toThrow(keyFingerprint(otherKey).toString('hex'));
    expect(counted.calls.every((call) => call.range?.start === 0 && call.range.end === HEADER_LENGTH - 1)).toBe(true);
  });

  it('rejects ranges outside the plaintext or reversed', async () => {
    await store('bounds.hfa.enc', file);
    const reader = await readerOf('bounds.hfa.enc');
    const last = plaintext.length - 1;
    await expect(reader.read(0, plaintext.length)).rejects.toThrow(new RangeError(`cannot read bytes 0..${plaintext.length} of "bounds.hfa.enc": the archive holds bytes 0..${last}`));
    await expect(reader.read(-1, 5)).rejects.toThrow(/the archive holds bytes/);
    await expect(reader.read(20, 10)).rejects.toThrow(/start is after end/);
    await expect(reader.read(1.5, 10)).rejects.toThrow(/offsets must be integers/);
  });

  it('names a file cut at a record boundary when its last record is read', async () => {
    await store('cut.hfa.enc', file.subarray(0, HEADER_LENGTH + 3 * RECORD));
    const reader = await readerOf('cut.hfa.enc');
    expect(await reader.plaintextSize()).toBe(3 * DEFAULT_CHUNK);
    const { error } = await collect(await reader.read(3 * DEFAULT_CHUNK - 1, 3 * DEFAULT_CHUNK - 1));
    expect(error).toMatchObject({ code: 'TRUNCATED', message: 'truncated: final chunk missing' });
  });

  it('judges a short or foreign object like the decrypt stream', async () => {
    await store('short.hfa.enc', file.subarray(0, 30));
    await expect((await readerOf('short.hfa.enc')).plaintextSize()).rejects.toMatchObject({ code: 'TRUNCATED', message: 'truncated: header incomplete' });
    await store('header-only.hfa.enc', file.subarray(0, HEADER_LENGTH));
    await expect((await readerOf('header-only.hfa.enc')).plaintextSize()).rejects.toMatchObject({ code: 'TRUNCATED', message: 'truncated: final chunk missing' });
    await store('foreign.hfa', plaintext);
    await expect((await readerOf('foreign.hfa')).read(0, 0)).rejects.toMatchObject({ code: 'NOT_ENCRYPTED' });
  });
});

describe('empty plaintext', () => {
  it('has size 0 and refuses any range', async () => {
    const storedSize = await store('empty.hfa.enc', await encrypt(profileKey, Buffer.alloc(0)));
    expect(storedSize).toBe(HEADER_LENGTH + TAG_LENGTH);
    const reader = await readerOf('empty.hfa.enc');
    expect(await reader.plaintextSize()).toBe(0);
    await expect(reader.read(0, 0)).rejects.toThrow(/the archive is empty/);
  });
});

describe('plain archive', () => {
  const key = 'plain.hfa';
  const plaintext = seededBytes(200_000, 5);

  beforeAll(async () => {
    await store(key, plaintext);
  });

  it('passes ranges through as storage range reads, and the fallback cuts the same bytes', async () => {
    const counted = countingStorage(storage);
    const ranged = await readerOf(key, { store: counted.storage, encryptionKey: null });
    const whole = await readerOf(key, { store: counted.storage, canRangeRead: false, encryptionKey: null });
    expect(await ranged.plaintextSize()).toBe(plaintext.length);
    const random = seededRandom(6);
    for (let i = 0; i < 50; i++) {
      const start = Math.floor(random() * plaintext.length);
      const end = start + Math.floor(random() * (plaintext.length - start));
      expect(firstDifference(await readRange(ranged, start, end), plaintext.subarray(start, end + 1))).toBe('identical');
      expect(firstDifference(await readRange(whole, start, end), plaintext.subarray(start, end + 1))).toBe('identical');
      expect(counted.calls.slice(-2).map((call) => call.range)).toEqual([{ start, end }, undefined]);
    }
  });

  it('hands its abort signal to every storage read', async () => {
    const signal = AbortSignal.abort();
    for (const canRangeRead of [true, false]) {
      const plain = await readerOf(key, { encryptionKey: null, canRangeRead, signal });
      expect((await collect(await plain.read(0, 10))).error).toMatchObject({ name: 'AbortError' });
    }
    await store('aborted.hfa.enc', await encrypt(profileKey, plaintext));
    await expect((await readerOf('aborted.hfa.enc', { signal })).read(0, 10)).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('rejects a range past the end', async () => {
    const reader = await readerOf(key, { encryptionKey: null });
    await expect(reader.read(0, plaintext.length)).rejects.toThrow(/the archive holds bytes 0\.\.199999/);
    await expect(reader.read(5, 4)).rejects.toThrow(/start is after end/);
  });
});
