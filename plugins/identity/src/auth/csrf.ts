import { HttpError, type RequestInfo } from '@holdfast/kernel';
import { constantTimeEquals } from '../crypto/scrypt-hash.js';
import { csrfTokenFor } from '../crypto/tokens.js';
import { CSRF_HEADER } from './session-cookie.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
// These act before a session exists (or replace it), so a stale cookie must not block them.
const EXEMPT_PATHS = new Set(['/api/auth/sign-in', '/api/auth/setup']);

/**
 * Session-bound CSRF check for cookie-authenticated mutations: the `X-CSRF-Token` header must equal the token
 * derived from the session cookie (returned by sign-in and `GET /api/auth/session`). A cross-site form can send
 * the cookie but cannot read the token. Throws 403 naming the header when it is missing or wrong.
 */
export function assertCsrf(request: RequestInfo, sessionToken: string): void {
  if (SAFE_METHODS.has(request.method.toUpperCase()) || EXEMPT_PATHS.has(request.path)) return;
  const header = request.headers[CSRF_HEADER];
  const sent = Array.isArray(header) ? header[0] : header;
  if (!sent || !constantTimeEquals(sent, csrfTokenFor(sessionToken))) {
    throw new HttpError(403, 'Missing or invalid CSRF token: send the X-CSRF-Token header from sign-in or GET /api/auth/session');
  }
}
