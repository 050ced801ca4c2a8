/** Process-level settings of single sign-on, read from the environment once. */
export interface SsoConfig {
  /** `OIDC_AUTO_REDIRECT`: the provider id the sign-in entry redirects to (SPEC Authentication 12). */
  autoRedirectProviderId: string | undefined;
  /**
   * `HOLDFAST_PUBLIC_URL`: the address browsers reach the server at, for the OIDC redirect URI and the SAML ACS URL.
   * Unset: derived from the request's Host header and scheme.
   */
  publicUrl: string | undefined;
  /** `OIDC_ALLOW_HTTP=true`: accept `http://` issuers (loopback issuers are always accepted, for local setups). */
  allowHttpIssuers: boolean;
}

function isTrue(value: string | undefined): boolean {
  return ['true', '1', 'yes', 'on'].includes((value ?? '').trim().toLowerCase());
}

/** Reads {@link SsoConfig} from environment variables. */
export function ssoConfigFromEnv(env: NodeJS.ProcessEnv): SsoConfig {
  const publicUrl = env.HOLDFAST_PUBLIC_URL?.trim().replace(/\/+$/, '') || undefined;
  return {
    autoRedirectProviderId: env.OIDC_AUTO_REDIRECT?.trim() || undefined,
    publicUrl,
    allowHttpIssuers: isTrue(env.OIDC_ALLOW_HTTP),
  };
}
