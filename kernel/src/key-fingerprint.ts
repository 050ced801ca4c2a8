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
