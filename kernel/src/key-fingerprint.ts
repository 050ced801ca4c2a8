import { createHmac } from 'node:crypto';

/** The HMAC message of the encryption key fingerprint (docs/formats/encryption.md, "Key fingerprint"). */
export const KEY_FINGERPRINT_MESSAGE = 'holdfast key fingerprint';

/**
 * The one fingerprint of an encryption profile key, shown by the vault, written into encrypted headers and sidecars
 * and printed by recovery kits: the first 16 bytes of HMAC-SHA256(key, "holdfast key fingerprint"), as 32 hex.
 */
export function encryptionKeyFingerprint(key: Uint8Array): string {
  return createHmac('sha256', key).update(KEY_FINGERPRINT_MESSAGE).digest().subarray(0, 16).toString('hex');
}

// The age key strings of public-key encryption profiles (issue 45) live next to the key fingerprint: the catalog
// validates recipients with them and the engine encrypts to them. Exported from here to keep the index untouched.
export * from './age-keys.js';
