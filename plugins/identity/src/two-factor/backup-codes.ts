import { createHash, randomBytes } from 'node:crypto';

/** How many backup codes an enrollment or a regeneration hands out. */
export const BACKUP_CODE_COUNT = 10;
// Crockford-style alphabet without look-alikes (no 0/o, 1/l/i), so a code copied from paper is typed right.
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** One code: ten characters (about 49 bits) shown as `xxxxx-xxxxx`. */
function newBackupCode(): string {
  const bytes = randomBytes(10);
  const chars = [...bytes].map((byte) => ALPHABET[byte % ALPHABET.length]).join('');
  return `${chars.slice(0, 5)}-${chars.slice(5)}`;
}

/** A fresh set of single-use backup codes, in the form shown to the user once. */
export function newBackupCodes(): string[] {
  return Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
}

/** Case, spaces and the dash do not matter when a code is typed back. */
function normalize(code: string): string {
  return code.toLowerCase().replace(/[\s-]+/g, '');
}

/**
 * The stored form of a code: SHA-256 with a fixed label. The codes are random and long enough that a slow hash
 * adds nothing, and a fast one lets ten codes be checked per attempt without stalling sign-in.
 */
export function hashBackupCode(code: string): string {
  return createHash('sha256').update('holdfast-backup-code:').update(normalize(code)).digest('hex');
}
