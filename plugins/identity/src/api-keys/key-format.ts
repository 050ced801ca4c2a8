import { randomBytes } from 'node:crypto';

/** Fixed start of every raw key (SPEC "ApiKey": 8 characters). */
export const API_KEY_PREFIX = 'svc_key_';
/** Characters of a raw key kept for display and lookup (SPEC: 16). */
export const DISPLAY_PREFIX_LENGTH = 16;
/**
 * Random bytes of a raw key. The SPEC asks for 40 lowercase hex characters (total length 48); 40 hex characters
 * carry 20 bytes, so 20 random bytes it is (the SPEC's "30 random bytes" cannot fit in 40 hex characters).
 */
export const API_KEY_RANDOM_BYTES = 20;
/** Shape of a raw key. */
export const RAW_API_KEY_PATTERN = /^svc_key_[0-9a-f]{40}$/;

/** A fresh raw key: `svc_key_` + 40 lowercase hex characters. */
export function generateRawKey(): string {
  return API_KEY_PREFIX + randomBytes(API_KEY_RANDOM_BYTES).toString('hex');
}

/** The 16-character display and lookup prefix of a raw key. */
export function displayPrefix(rawKey: string): string {
  return rawKey.slice(0, DISPLAY_PREFIX_LENGTH);
}

/** SPEC "Authentication" 6a: a token that does not start with the fixed prefix is not a key at all. */
export function looksLikeApiKey(token: string): boolean {
  return token.startsWith(API_KEY_PREFIX);
}
