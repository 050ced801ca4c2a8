import { HttpError, routeResult, type RouteRequest } from '@holdfast/kernel';
import { z } from 'zod';
import { readCookie } from '../auth/session-cookie.js';
import { sha256Hex } from '../crypto/scrypt-hash.js';
import { newSessionToken } from '../crypto/tokens.js';
import type { User } from '../entities/user.js';
import type { OneTimeValues } from './one-time-values.js';

/** Cookie that carries a sign-in waiting for its second factor. */
export const PENDING_COOKIE = 'holdfast_2fa';
/** How long a password sign-in waits for its second factor. */
export const PENDING_TTL_MS = 5 * 60 * 1000;

/** Second factors a user can answer with. */
export type SecondFactorMethod = 'totp' | 'backup-code' | 'passkey';

/** What the first step stores: whose sign-in it is and how the first factor was given. */
export interface PendingSignIn {
  userId: string;
  firstFactor: 'password';
}

/** The answer of a password sign-in that still needs a second factor. */
export const twoFactorRequiredSchema = z
  .object({
    twoFactorRequired: z.literal(true),
    methods: z.array(z.enum(['totp', 'backup-code', 'passkey'])),
    expiresAt: z.string(),
  })
  .meta({
    id: 'TwoFactorRequired',
    description: 'The password was right; finish with `POST /api/auth/two-factor/verify` or a passkey within five minutes (the pending state rides in an HttpOnly cookie).',
  });

const identifierOf = (token: string) => `two-factor-pending:${sha256Hex(token)}`;

/** Stores a pending sign-in and answers 200 `{ twoFactorRequired: true }` with the HttpOnly pending cookie. */
export async function startPendingSignIn(values: OneTimeValues, request: RouteRequest, user: User, methods: SecondFactorMethod[]) {
  const token = newSessionToken();
  const pending: PendingSignIn = { userId: user.id, firstFactor: 'password' };
  const expiresAt = await values.put(identifierOf(token), { ...pending }, PENDING_TTL_MS);
  const cookie = [
    `${PENDING_COOKIE}=${encodeURIComponent(token)}`,
    'Path=/api/auth',
    'HttpOnly',
    'SameSite=Strict',
    `Max-Age=${Math.floor(PENDING_TTL_MS / 1000)}`,
    ...(request.secure ? ['Secure'] : []),
  ].join('; ');
  return routeResult({
    status: 200,
    headers: { 'Set-Cookie': cookie, 'Cache-Control': 'no-store' },
    body: { twoFactorRequired: true, methods, expiresAt: expiresAt.toISOString() },
  });
}

function pendingToken(request: RouteRequest): string | undefined {
  return readCookie(request.headers.cookie, PENDING_COOKIE);
}

/** The pending sign-in of this request, left in place (for building passkey options); null when there is none. */
export async function peekPendingSignIn(values: OneTimeValues, request: RouteRequest): Promise<PendingSignIn | null> {
  const token = pendingToken(request);
  return token ? values.peek<PendingSignIn>(identifierOf(token)) : null;
}

/** The pending sign-in of this request, or 401 naming why the second step cannot go on. */
export async function requirePendingSignIn(values: OneTimeValues, request: RouteRequest): Promise<PendingSignIn> {
  const pending = await peekPendingSignIn(values, request);
  if (!pending) throw new HttpError(401, 'No sign-in is waiting for a second factor, or it expired; sign in with the password again');
  return pending;
}

/** Uses the pending sign-in up once the second factor was accepted; 401 when another request used it first. */
export async function finishPendingSignIn(values: OneTimeValues, request: RouteRequest): Promise<PendingSignIn> {
  const token = pendingToken(request);
  const pending = token ? await values.take<PendingSignIn>(identifierOf(token)) : null;
  if (!pending) throw new HttpError(401, 'This sign-in was already completed or expired; sign in with the password again');
  return pending;
}
