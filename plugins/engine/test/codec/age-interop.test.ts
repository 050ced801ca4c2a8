import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isDecryptError } from '../../src/codec/encryption/errors.js';
import { AgeKeyError, createAgeDecryptStream, createAgeEncryptStream, generateAgeIdentity, parseAgeIdentity, parseAgeRecipient } from '../../src/codec/age/index.js';
import { requireAgeBinary, runAge } from './age-support.js';
import { runThrough, runUntilError } from './helpers.js';

// Sizes around the 64 KiB chunk boundary: the empty file, one byte, exactly one and two chunks, and in between.
const SIZES = [0, 1, 65_535, 65_536, 65_537, 131_072, 300_001];

function patterned(size: number): Buffer {
  const bytes = Buffer.alloc(size);
  for (let index = 0; index < size; index += 1) bytes[index] = (index * 31 + (index >> 9)) & 0xff;
  return bytes;
}

describe('age format: Holdfast and the age binary read each other', () => {
  let dir: string;
  const { identity, recipient } = generateAgeIdentity();
  let keyFile: string;

  beforeAll(async () => {
    requireAgeBinary();
    dir = await mkdtemp(join(tmpdir(), 'holdfast-age-'));
    keyFile = join(dir, 'key.txt');
    await writeFile(keyFile, `# created by the Holdfast test\n# public key: ${recipient}\n${identity}\n`);
  });
  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('derives from a generated identity the recipient age-keygen derives', () => {
    const derived = spawnSync('age-keygen', ['-y', keyFile], { encoding: 'utf8' });
    expect(derived.stderr).toBe('');
    expect(derived.stdout.trim()).toBe(recipient);
  });

  for (const size of SIZES) {
    it(`age -d decrypts what Holdfast encrypted (${size} bytes)`, async () => {
      const plaintext = patterned(size);
      const encrypted = await runThrough(createAgeEncryptStream(recipient), plaintext, 10_007);
      const file = join(dir, `holdfast-${size}.age`);
      await writeFile(file, encrypted);
      const result = runAge(['-d', '-i', keyFile, file]);
      expect(result.stderr).toBe('');
      expect(result.status).toBe(0);
      expect(result.stdout.equals(plaintext)).toBe(true);
    });

    it(`Holdfast decrypts what age -r encrypted (${size} bytes)`, async () => {
      const plaintext = patterned(size);
      const encrypted = runAge(['-r', recipient], plaintext);
      expect(encrypted.status).toBe(0);
      const decrypted = await runThrough(createAgeDecryptStream(identity), encrypted.stdout, 4_099);
      expect(decrypted.equals(plaintext)).toBe(true);
    });
  }

  it('reads a file age wrote to two recipients, with either identity', async () => {
    const second = generateAgeIdentity();
    const encrypted = runAge(['-r', recipient, '-r', second.recipient], Buffer.from('two recipients'));
    expect((await runThrough(createAgeDecryptStream(second.identity), encrypted.stdout)).toString()).toBe('two recipients');
    expect((await runThrough(createAgeDecryptStream(identity), encrypted.stdout)).toString()).toBe('two recipients');
  });

  it('refuses a wrong key with WRONG_KEY before releasing any byte, and age refuses it too', async () => {
    const other = generateAgeIdentity();
    const encrypted = await runThrough(createAgeEncryptStream(recipient), patterned(100_000));
    const { output, error } = await runUntilError(createAgeDecryptStream(other.identity), encrypted);
    expect(output.length).toBe(0);
    expect(isDecryptError(error) && error.code).toBe('WRONG_KEY');
    const otherKey = join(dir, 'other.txt');
    await writeFile(otherKey, `${other.identity}\n`);
    const file = join(dir, 'wrong.age');
    await writeFile(file, encrypted);
    expect(runAge(['-d', '-i', otherKey, file]).status).not.toBe(0);
  });

  it('detects a flipped payload bit, a cut file, appended bytes and a changed header', async () => {
    const encrypted = await runThrough(createAgeEncryptStream(recipient), patterned(200_000));
    const codeOf = async (bytes: Buffer) => {
      const { error } = await runUntilError(createAgeDecryptStream(identity), bytes);
      return isDecryptError(error) ? error.code : String(error);
    };
    const flipped = Buffer.from(encrypted);
    flipped[flipped.length - 100] = flipped[flipped.length - 100]! ^ 1;
    expect(await codeOf(flipped)).toBe('AUTH_FAILED');
    const headerEnd = encrypted.indexOf(0x0a, encrypted.indexOf('\n--- ') + 1) + 1;
    expect(await codeOf(encrypted.subarray(0, headerEnd + 16 + 2 * (65_536 + 16)))).toBe('TRUNCATED');
    expect(['AUTH_FAILED', 'TRAILING_DATA']).toContain(await codeOf(Buffer.concat([encrypted, Buffer.alloc(20)])));
    const header = Buffer.from(encrypted);
    header[headerEnd - 5] = header[headerEnd - 5]! ^ 1; // inside the header's MAC
    expect(['CORRUPT_HEADER', 'WRONG_KEY']).toContain(await codeOf(header));
    expect(await codeOf(Buffer.from('not an age file at all'))).toBe('NOT_ENCRYPTED');
  });

  it('parses keys strictly and never quotes them in the error', () => {
    expect(parseAgeRecipient(`  ${recipient}\n`).text).toBe(recipient);
    for (const bad of ['age1', 'age1qqqq', recipient.toUpperCase(), `${recipient.slice(0, -1)}q`, identity, 'ssh-ed25519 AAAA']) {
      expect(() => parseAgeRecipient(bad)).toThrow(AgeKeyError);
    }
    try {
      parseAgeIdentity(identity.slice(0, -2));
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(AgeKeyError);
      expect((error as Error).message).not.toContain(identity.slice(20, 40));
    }
    expect(() => parseAgeIdentity(recipient)).toThrow(AgeKeyError);
    expect(parseAgeIdentity(`# comment\n\n${identity}\n`).publicKey.length).toBe(32);
  });
});
