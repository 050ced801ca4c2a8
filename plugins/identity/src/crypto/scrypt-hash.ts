import { randomBytes, scrypt, timingSafeEqual, createHash } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (password: string, salt: Buffer, keylen: number) => Promise<Buffer>;

/** Salt and derived-key sizes shared by passwords and API keys: 16-byte salt, 64-byte hash. */
const SALT_BYTES = 16;
const HASH_BYTES = 64;

/** Hashes a secret with scrypt into `<salt_hex>:<hash_hex>` (Node's default cost N=16384, r=8, p=1). */
export async function scryptHash(secret: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  const hash = await scryptAsync(secret, salt, HASH_BYTES);
  return `${salt.toString('hex')}:${hash.toString('hex')}`;
}

const SCRYPT_FORMAT = /^([0-9a-f]{32}):([0-9a-f]{128})$/;

/** True when `stored` is in the salted `<salt_hex>:<hash_hex>` format. */
export function isScryptHash(stored: string): boolean {
  return SCRYPT_FORMAT.test(stored);
}

/** Constant-time check of `secret` against a `<salt_hex>:<hash_hex>` value; false for any other format. */
export async function verifyScryptHash(secret: string, stored: string): Promise<boolean> {
  const match = SCRYPT_FORMAT.exec(stored);
  if (!match) return false;
  const expected = Buffer.from(match[2]!, 'hex');
  const actual = await scryptAsync(secret, Buffer.from(match[1]!, 'hex'), HASH_BYTES);
  return timingSafeEqual(actual, expected);
}

/** SHA-256 hex digest (session token storage, legacy API key hashes). */
export function sha256Hex(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** Constant-time equality of two strings of any length. */
export function constantTimeEquals(a: string, b: string): boolean {
  // Hash both sides first so the comparison length never depends on the input.
  const left = createHash('sha256').update(a).digest();
  const right = createHash('sha256').update(b).digest();
  return timingSafeEqual(left, right) && a.length === b.length;
}
