import { createHash, randomBytes } from 'node:crypto';

/** Enrollment tokens start with this, so a leaked one is recognisable (secret scanners, logs). */
export const ENROLLMENT_TOKEN_PREFIX = 'hfa_enroll_';

/** Default lifetime of an enrollment token (docs/agents.md); `HOLDFAST_AGENT_ENROLLMENT_TTL_SECONDS` changes it. */
export const DEFAULT_ENROLLMENT_TTL_MS = 15 * 60_000;

/** A new one-time token: 32 random bytes (256 bits), base64url, after the prefix. */
export function newEnrollmentToken(): string {
  return `${ENROLLMENT_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
}

/**
 * What is stored instead of the token. SHA-256 rather than the scrypt of passwords and API keys: the token carries 256
 * random bits and lives minutes, so no guessing attack needs slowing down, and an unsalted hash lets the server find
 * the agent by its token in one indexed lookup.
 */
export function enrollmentTokenHash(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/**
 * The token lifetime from the environment: whole seconds from 1 to 86400 (a day). A malformed value stops the
 * start with a message naming the variable, rather than silently using the default.
 */
export function enrollmentTtlFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env.HOLDFAST_AGENT_ENROLLMENT_TTL_SECONDS;
  if (raw === undefined || raw === '') return DEFAULT_ENROLLMENT_TTL_MS;
  const seconds = Number(raw);
  if (!/^\d+$/.test(raw) || seconds < 1 || seconds > 86_400) {
    throw new Error(`HOLDFAST_AGENT_ENROLLMENT_TTL_SECONDS must be a whole number of seconds from 1 to 86400, got "${raw}"`);
  }
  return seconds * 1000;
}
