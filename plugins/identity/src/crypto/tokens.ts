import { createHmac, randomBytes, randomUUID } from 'node:crypto';

/** A new record id. */
export function newId(): string {
  return randomUUID();
}

/** A session cookie value: 32 random bytes, base64url. */
export function newSessionToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * The CSRF token bound to a session: HMAC-SHA256 of a fixed label keyed by the raw session token. Only a holder of
 * the cookie value (the browser, or the server while handling its request) can compute it, and it reveals nothing
 * about the cookie, so it can be given to page scripts.
 */
export function csrfTokenFor(sessionToken: string): string {
  return createHmac('sha256', sessionToken).update('holdfast-csrf').digest('base64url');
}

let lastMs = 0;
let sequence = 0;

/**
 * A UUID version 7 (RFC 9562): 48-bit millisecond time, then a 12-bit counter that keeps ids made in the same
 * millisecond by this process in creation order, then random bits. Audit entries use it so "newest first" is
 * exact even when several are written within one millisecond.
 */
export function newTimeOrderedId(now = Date.now()): string {
  if (now <= lastMs) {
    sequence = (sequence + 1) & 0xfff;
    if (sequence === 0) lastMs += 1;
  } else {
    lastMs = now;
    sequence = 0;
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(lastMs, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
