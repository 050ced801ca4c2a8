import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createAgeDecryptStream, parseAgeIdentity } from '../../src/codec/age/index.js';
import { formatAgeRecipient } from '../../src/codec/age/age-keys.js';
import { requireAgeBinary, runAge } from './age-support.js';
import { runThrough } from './helpers.js';

interface AgeVectorDocument {
  identity: string;
  recipient: string;
  vectors: Array<{ name: string; plaintext: string; ciphertextBase64: string }>;
}

/** The JSON block under "## Test vectors (age)" of docs/formats/encryption.md. */
async function readAgeVectors(): Promise<AgeVectorDocument> {
  const doc = await readFile(new URL('../../../../docs/formats/encryption.md', import.meta.url), 'utf8');
  const start = doc.indexOf('## Test vectors (age)');
  if (start < 0) throw new Error('docs/formats/encryption.md has no "## Test vectors (age)" section');
  const block = /```json\n([\s\S]*?)\n```/.exec(doc.slice(start));
  if (!block?.[1]) throw new Error('the age test vector section has no JSON block');
  return JSON.parse(block[1]) as AgeVectorDocument;
}

const document = await readAgeVectors();
const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('age test vectors of docs/formats/encryption.md (made by the age binary)', () => {
  it('derives the documented recipient from the documented identity', () => {
    expect(formatAgeRecipient(parseAgeIdentity(document.identity).publicKey)).toBe(document.recipient);
    expect(document.vectors.map((vector) => vector.plaintext.length)).toContain(0);
  });

  for (const vector of document.vectors) {
    it(`Holdfast decrypts "${vector.name}" to its plaintext`, async () => {
      const output = await runThrough(createAgeDecryptStream(document.identity), Buffer.from(vector.ciphertextBase64, 'base64'), 13);
      expect(output.toString('utf8')).toBe(vector.plaintext);
    });

    it(`age -d decrypts "${vector.name}" to the same plaintext`, async () => {
      requireAgeBinary();
      const dir = await mkdtemp(join(tmpdir(), 'holdfast-age-vector-'));
      dirs.push(dir);
      await writeFile(join(dir, 'key.txt'), `${document.identity}\n`);
      const result = runAge(['-d', '-i', join(dir, 'key.txt')], Buffer.from(vector.ciphertextBase64, 'base64'));
      expect(result.status, result.stderr).toBe(0);
      expect(result.stdout.toString('utf8')).toBe(vector.plaintext);
    });
  }
});
