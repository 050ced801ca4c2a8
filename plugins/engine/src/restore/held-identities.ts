import { randomUUID } from 'node:crypto';
import type { AgeIdentity } from '@holdfast/kernel';

// The private key of a public-key backup (issue 45) is sent with the restore request and used for that one run. It
// must never reach the database, so the stored request carries only a random token; the parsed key waits here, in
// this process's memory, until the run takes it (once) or it expires. A restart, or a run claimed by another
// instance, finds no key and fails saying the restore must be started again with the key.

/** How long a queued restore's key is held when no run takes it. */
export const HELD_IDENTITY_TTL_MS = 6 * 60 * 60 * 1000;

const held = new Map<string, { identity: AgeIdentity; expiresAt: number }>();

function sweep(now: number): void {
  for (const [token, entry] of held) if (entry.expiresAt <= now) held.delete(token);
}

/** Holds the key and returns the token the stored request names it by. */
export function holdIdentity(identity: AgeIdentity, now = Date.now()): string {
  sweep(now);
  const token = randomUUID();
  held.set(token, { identity, expiresAt: now + HELD_IDENTITY_TTL_MS });
  return token;
}

/** The held key of `token`, removed as it is handed out; undefined when it was never held here or expired. */
export function takeIdentity(token: string | undefined, now = Date.now()): AgeIdentity | undefined {
  if (!token) return undefined;
  const entry = held.get(token);
  held.delete(token);
  return entry && entry.expiresAt > now ? entry.identity : undefined;
}
