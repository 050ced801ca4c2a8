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
