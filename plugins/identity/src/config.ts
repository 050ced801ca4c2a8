/** Process-level settings of the identity plugin, read once from the environment. */
export interface IdentityConfig {
  /** `DISABLE_EMAIL_LOGIN=true`: password sign-in and setup answer 403. */
  isEmailLoginDisabled: boolean;
  /** `TRUST_PROXY=true`: `X-Forwarded-Proto: https` marks the request secure (cookie gets `Secure`). */
  trustProxy: boolean;
  /** `HOLDFAST_ADMIN_EMAIL` / `HOLDFAST_ADMIN_PASSWORD`: first super administrator created at start. */
  adminEmail?: string;
  adminPassword?: string;
  /** How long settings (rate limits, audit retention) are cached before a re-read; default 5000 ms. */
  settingsCacheMs: number;
  /** How often housekeeping runs (audit retention, expired sessions and counters); default one hour. */
  housekeepingIntervalMs: number;
}

function isTrue(value: string | undefined): boolean {
  return ['true', '1', 'yes', 'on'].includes((value ?? '').trim().toLowerCase());
}

/** Reads {@link IdentityConfig} from environment variables; `overrides` win. */
export function identityConfigFromEnv(env: NodeJS.ProcessEnv = process.env, overrides: Partial<IdentityConfig> = {}): IdentityConfig {
  return {
    isEmailLoginDisabled: isTrue(env.DISABLE_EMAIL_LOGIN),
    trustProxy: isTrue(env.TRUST_PROXY),
    adminEmail: env.HOLDFAST_ADMIN_EMAIL?.trim() || undefined,
    adminPassword: env.HOLDFAST_ADMIN_PASSWORD || undefined,
    settingsCacheMs: 5_000,
    housekeepingIntervalMs: 60 * 60 * 1000,
    ...overrides,
  };
}
