import { randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { createDecryptStream } from '../../src/codec/encryption/decrypt-stream.js';
import { isDecryptError, type DecryptErrorCode } from '../../src/codec/encryption/errors.js';
import { HEADER_LENGTH, TAG_LENGTH, keyFingerprint } from '../../src/codec/encryption/format.js';
import { encrypt, runUntilError } from './helpers.js';

// Small chunks make every boundary cheap to reach: 16-byte chunks, records of 32 bytes.
const CHUNK = 16;
const RECORD = CHUNK + TAG_LENGTH;
const key = randomBytes(32);

interface Outcome {
  output: Buffer;
  code?: DecryptErrorCode;
  message?: string;
}

async function open(file: Buffer, withKey = key): Promise<Outcome> {
  const { output, error } = await runUntilError(createDecryptStream({ key: withKey }), file);
  if (error === undefined) return { output };
  if (!isDecryptError(error)) throw error;
  return { output, code: error.code, message: error.message };
}

/** Records of a file in order (the header excluded). */
function records(file: Buffer): Buffer[] {
  const list: Buffer[] = [];
  for (let offset = HEADER_LENGTH; offset < file.length; offset += RECORD) list.push(file.subarray(offset, offset + RECORD));
  return list;
}

function rebuild(file: Buffer, parts: Buffer[]): Buffer {
  return Buffer.concat([file.subarray(0, HEADER_LENGTH), ...parts]);
}

describe('decrypting damaged or foreign files', () => {
  // 4 full chunks and a partial last one; and 4 full chunks where the last one is full.
  const plaintext = randomBytes(4 * CHUNK + 8);
  const plaintextFullLast = randomBytes(4 * CHUNK);
  let file: Buffer;
  let fileFullLast: Buffer;

  beforeAll(async () => {
    file = await encrypt(key, plaintext, CHUNK);
    fileFullLast = await encrypt(key, plaintextFullLast, CHUNK);
    expect(records(file)).toHaveLength(5);
    expect(records(fileFullLast)).toHaveLength(4);
  });

  it('opens the intact files (the baseline the other cases change)', async () => {
    expect((await open(file)).output.equals(plaintext)).toBe(true);
    expect((await open(fileFullLast)).output.equals(plaintextFullLast)).toBe(true);
  });

  it('names a wrong key with both fingerprints and releases nothing', async () => {
    const otherKey = randomBytes(32);
    const outcome = await open(file, otherKey);
    expect(outcome.code).toBe('WRONG_KEY');
    expect(outcome.message).toBe(
      `wrong key: this backup needs the key with fingerprint ${keyFingerprint(key).toString('hex')}, ` +
        `the given key has fingerprint ${keyFingerprint(otherKey).toString('hex')}`,
    );
    expect(outcome.message).not.toContain(otherKey.toString('hex'));
    expect(outcome.output).toHaveLength(0);
  });

  it('detects truncation at every chunk boundary as a missing final chunk', async () => {
    for (const [name, source] of [['partial last', file], ['full last', fileFullLast]] as const) {
      const count = records(source).length;
      for (let kept = 0; kept < count; kept++) {
        const outcome = await open(source.subarray(0, HEADER_LENGTH + kept * RECORD));
        expect({ name, kept, code: outcome.code, message: outcome.message }).toEqual({
          name,
          kept,
          code: 'TRUNCATED',
          message: 'truncated: final chunk missing',
        });
      }
    }
  });

  it('rejects truncation at every other length and never releases a byte that was not in the plaintext', async () => {
    for (let length = 0; length < file.length; length++) {
      const outcome = await open(file.subarray(0, length));
      expect(outcome.code, `cut at ${length}`).toBeDefined();
      expect(plaintext.subarray(0, outcome.output.length).equals(outcome.output)).toBe(true);
      expect(outcome.output.length).toBeLessThan(plaintext.length);
    }
  });

  it('names the reason for a file cut inside the header or inside a tag', async () => {
    expect(await open(file.subarray(0, 30))).toMatchObject({ code: 'TRUNCATED', message: 'truncated: header incomplete' });
    const insideTag = await open(file.subarray(0, HEADER_LENGTH + RECORD + 10));
    expect(insideTag).toMatchObject({ code: 'TRUNCATED', message: 'truncated: chunk 1 is incomplete' });
  });

  it('rejects swapped, duplicated and removed chunks', async () => {
    const [r0, r1, r2, r3, r4] = records(file) as [Buffer, Buffer, Buffer, Buffer, Buffer];
    const swapped = await open(rebuild(file, [r0, r2, r1, r3, r4]));
    expect(swapped).toMatchObject({ code: 'AUTH_FAILED', message: 'chunk 1 failed authentication' });
    expect(swapped.output.equals(plaintext.subarray(0, CHUNK))).toBe(true);
    expect((await open(rebuild(file, [r0, r1, r1, r2, r3, r4]))).code).toBe('AUTH_FAILED');
    expect((await open(rebuild(file, [r0, r2, r3, r4]))).code).toBe('AUTH_FAILED');
    // The last record moved forward: it is sealed as final and with another index.
    expect((await open(rebuild(file, [r0, r4]))).code).toBe('AUTH_FAILED');
  });

  it('rejects a flip of any single byte of header or body', async () => {
    for (let offset = 0; offset < file.length; offset++) {
      const damaged = Buffer.from(file);
      damaged[offset] = (damaged[offset] as number) ^ 0x01;
      const outcome = await open(damaged);
      expect(outcome.code, `flip at ${offset}`).toBeDefined();
      expect(plaintext.subarray(0, outcome.output.length).equals(outcome.output)).toBe(true);
    }
  });

  it('releases no byte of a chunk whose tag fails', async () => {
    const damaged = Buffer.from(file);
    const inThirdRecord = HEADER_LENGTH + 2 * RECORD + 3;
    damaged[inThirdRecord] = (damaged[inThirdRecord] as number) ^ 0x80;
    const outcome = await open(damaged);
    expect(outcome).toMatchObject({ code: 'AUTH_FAILED', message: 'chunk 2 failed authentication' });
    expect(outcome.output.equals(plaintext.subarray(0, 2 * CHUNK))).toBe(true);
  });

  it('rejects data appended after the final chunk', async () => {
    const afterFull = await open(Buffer.concat([fileFullLast, Buffer.from([0])]));
    expect(afterFull).toMatchObject({ code: 'TRAILING_DATA', message: 'unexpected data after the final chunk' });
    expect((await open(Buffer.concat([fileFullLast, records(fileFullLast)[0] as Buffer]))).code).toBe('TRAILING_DATA');
    // Appending to a partial last record turns it into a longer record whose tag no longer verifies.
    expect((await open(Buffer.concat([file, Buffer.from('x')]))).code).toBe('AUTH_FAILED');
    expect((await open(Buffer.concat([file, file]))).code).toBeDefined();
  });

  it('names foreign files, other versions and corrupt chunk sizes', async () => {
    expect(await open(Buffer.alloc(0))).toMatchObject({ code: 'NOT_ENCRYPTED', message: 'not a Holdfast encrypted file' });
    expect((await open(Buffer.from('HF'))).code).toBe('NOT_ENCRYPTED');
    expect((await open(Buffer.from('PK\u0003\u0004 a zip file, not a backup'))).code).toBe('NOT_ENCRYPTED');
    const version2 = Buffer.from(file);
    version2[5] = 2;
    expect(await open(version2)).toMatchObject({ code: 'UNSUPPORTED_VERSION', message: 'unsupported format version 2' });
    const hugeChunks = Buffer.from(file);
    hugeChunks.writeUInt32BE(0xffffffff, 6);
    expect(await open(hugeChunks)).toMatchObject({
      code: 'CORRUPT_HEADER',
      message: 'corrupt header: chunk size 4294967295 out of range',
    });
  });
});
