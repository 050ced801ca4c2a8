/** Process-level settings of the identity plugin, read once from the environment. */
export interface IdentityConfig {
  /** `DISABLE_EMAIL_LOGIN=true`: password sign-in and setup answer 403. */
  isEmailLoginDisabled: boolean;
  /** `TRUST_PROXY=true`: `X-Forwarded-Proto: https` marks the request secure (cookie gets `Secure`). */
  trustProxy: boolean;
  /** `HOLDFAST_ADMIN_EMAIL` / `HOLDFAST_ADMIN_PASSWORD`: first super administrator created at start. */
  adminEmail?: string;
  adminPassword?: string;
  /** How often housekeeping runs (audit retention, expired sessions and counters); default one hour. */
  housekeepingIntervalMs: number;
  /** `HOLDFAST_PUBLIC_URL`: the origin browsers use; passkeys are bound to it (default: the request's own origin). */
  publicUrl?: string;
  /** `HOLDFAST_STEP_UP_WINDOW_SECONDS`: how long a proven second factor allows protected actions (default 300 s). */
  stepUpWindowMs: number;
}

function isTrue(value: string | undefined): boolean {
  return ['true', '1', 'yes', 'on'].includes((value ?? '').trim().toLowerCase());
}

/** Whole seconds from 1 to 3600 from the environment, the default when unset; anything else stops the start, named. */
function secondsOr(value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === '') return fallback;
  const parsed = Number(value.trim());
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > 3600) {
    throw new Error(`HOLDFAST_STEP_UP_WINDOW_SECONDS must be a whole number of seconds from 1 to 3600 (got "${value}")`);
  }
  return parsed;
}

/** Reads {@link IdentityConfig} from environment variables; `overrides` win. */
export function identityConfigFromEnv(env: NodeJS.ProcessEnv = process.env, overrides: Partial<IdentityConfig> = {}): IdentityConfig {
  return {
    isEmailLoginDisabled: isTrue(env.DISABLE_EMAIL_LOGIN),
    trustProxy: isTrue(env.TRUST_PROXY),
    adminEmail: env.HOLDFAST_ADMIN_EMAIL?.trim() || undefined,
    adminPassword: env.HOLDFAST_ADMIN_PASSWORD || undefined,
    publicUrl: env.HOLDFAST_PUBLIC_URL?.trim() || undefined,
    housekeepingIntervalMs: 60 * 60 * 1000,
    stepUpWindowMs: secondsOr(env.HOLDFAST_STEP_UP_WINDOW_SECONDS, 300) * 1000,
    ...overrides,
  };
}
