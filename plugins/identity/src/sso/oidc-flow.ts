import { HttpError, type RouteRequest } from '@holdfast/kernel';
import * as oidc from 'openid-client';
import { isSecureRequest, readCookie } from '../auth/session-cookie.js';
import type { IdentityServices } from '../services.js';
import { SignInFailure } from '../audit/sign-in-failure.js';
import { auditedSsoSignIn, completeSsoSignIn } from './complete-sign-in.js';
import type { PendingSignIns } from './pending-sign-ins.js';
import { PENDING_SIGN_IN_TTL_MS } from './pending-sign-ins.js';
import type { ResolvedSsoProvider, SsoProviderStore } from './provider-store.js';
import { publicBaseUrl, redirectResult, safeRedirectTarget } from './redirects.js';
import type { SsoConfig } from './sso-config.js';
import type { ExternalIdentity } from './types.js';

/** Cookie that binds an OIDC sign-in to the browser that started it (holds the `state`). */
export const OIDC_STATE_COOKIE = 'holdfast_sso_state';
const STATE_COOKIE_PATH = '/api/auth/sso';
const DEFAULT_SCOPES = 'openid email profile';

/** The OIDC callback path of a provider (register `<public URL><path>` as redirect URI at the provider). */
export function oidcCallbackPath(providerId: string): string {
  return `/api/auth/sso/oidc/${encodeURIComponent(providerId)}/callback`;
}

function isLoopback(url: URL): boolean {
  return ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
}

/** Reads a claim by name; a dotted name walks into objects (`realm_access.roles` for Keycloak roles). */
export function claimAt(claims: Record<string, unknown>, name: string): unknown {
  if (name in claims) return claims[name];
  let value: unknown = claims;
  for (const part of name.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A claim value as a list of group names: an array of strings, or one string (comma/space separated lists are not split). */
export function groupsFrom(value: unknown): string[] {
  if (Array.isArray(value)) return value.filter((entry): entry is string => typeof entry === 'string');
  return typeof value === 'string' && value !== '' ? [value] : [];
}

/**
 * The HTTP status behind openid-client's "unexpected HTTP response status code" (its cause is the Response). A 3xx
 * is named as a redirect that was not followed: every request to the provider is sent with `redirect: 'manual'`, so
 * the client secret, code, verifier and access token never go on to another host (issue 41).
 */
function unexpectedStatus(error: unknown): string {
  const response = error instanceof Error ? error.cause : undefined;
  if (!(response instanceof Response)) return '';
  if (response.status >= 300 && response.status < 400) {
    return ` (HTTP ${response.status}: a redirect, not followed; redirects of the identity provider are refused so no secret goes to another host)`;
  }
  return ` (HTTP ${response.status})`;
}

/** Turns openid-client's errors into a 400 that says what the provider or the check objected to. */
function protocolError(error: unknown): HttpError {
  if (error instanceof oidc.ResponseBodyError || error instanceof oidc.AuthorizationResponseError) {
    const description = error.error_description ? `: ${error.error_description}` : '';
    return new HttpError(400, `OIDC sign-in failed: the provider answered ${error.error}${description}`.slice(0, 500));
  }
  const isProtocolCheck = /^(OAUTH_|ERR_JWT|ERR_JWS|ERR_JOSE)/.test((error as { code?: string } | undefined)?.code ?? '');
  if (error instanceof Error && (isProtocolCheck || error instanceof oidc.ClientError)) {
    // openid-client's message is generic ("unexpected JWT claim value encountered"); the cause names the check.
    const cause = error.cause instanceof Error && error.cause.message !== error.message ? ` (${error.cause.message})` : unexpectedStatus(error);
    return new HttpError(400, `OIDC sign-in failed: ${error.message}${cause}`.slice(0, 500));
  }
  return new HttpError(502, 'OIDC sign-in failed: the identity provider could not be reached or answered unexpectedly');
}

/** Authorization code flow with PKCE, state and nonce (openid-client v6). */
export class OidcFlow {
  private readonly configurations = new Map<string, { stamp: number; configuration: Promise<oidc.Configuration> }>();

  constructor(
    private readonly identity: IdentityServices,
    private readonly providers: SsoProviderStore,
    private readonly pending: PendingSignIns,
    private readonly config: SsoConfig,
  ) {}

  /** Discovers the provider once per provider version (an update re-discovers). */
  private configurationOf(provider: ResolvedSsoProvider): Promise<oidc.Configuration> {
    const { row } = provider;
    const cached = this.configurations.get(row.providerId);
    if (cached && cached.stamp === row.updatedAt.getTime()) return cached.configuration;
    const configuration = this.discover(provider);
    this.configurations.set(row.providerId, { stamp: row.updatedAt.getTime(), configuration });
    configuration.catch(() => this.configurations.delete(row.providerId));
    return configuration;
  }

  private async discover(provider: ResolvedSsoProvider): Promise<oidc.Configuration> {
    const { row, clientId, clientSecret } = provider;
    const target = row.discoveryEndpoint || row.issuer!;
    let server: URL;
    try {
      server = new URL(target);
    } catch {
      throw new HttpError(400, `OIDC provider "${row.providerId}" has an invalid issuer or discovery URL`);
    }
    const insecure = server.protocol === 'http:';
    if (insecure && !isLoopback(server) && !this.config.allowHttpIssuers) {
      throw new HttpError(400, `OIDC provider "${row.providerId}" uses http://; use https:// or set OIDC_ALLOW_HTTP=true`);
    }
    let configuration: oidc.Configuration;
    try {
      configuration = await oidc.discovery(
        server,
        clientId,
        clientSecret ? { client_secret: clientSecret } : undefined,
        clientSecret ? oidc.ClientSecretBasic(clientSecret) : oidc.None(),
        insecure ? { execute: [oidc.allowInsecureRequests] } : undefined,
      );
    } catch (error) {
      this.identity.logger.warn({ err: error, providerId: row.providerId }, 'OIDC discovery failed');
      throw new HttpError(502, `OIDC discovery failed for "${row.providerId}" at ${server.origin}: ${error instanceof Error ? error.message : 'unknown error'}${unexpectedStatus(error)}`.slice(0, 500));
    }
    // With an explicit discovery URL the library cannot compare issuers itself; the configured issuer must match.
    const discoveredIssuer = configuration.serverMetadata().issuer;
    if (row.issuer && discoveredIssuer !== row.issuer) {
      throw new HttpError(502, `OIDC provider "${row.providerId}" announces issuer ${discoveredIssuer}, not the configured ${row.issuer}`);
    }
    return configuration;
  }

  /** Starts a sign-in: remembers state, nonce and PKCE verifier, and redirects the browser to the provider. */
  async start(request: RouteRequest, providerId: string, redirectTo: string | undefined) {
    const provider = await this.providers.resolveForSignIn(providerId, 'oidc');
    const configuration = await this.configurationOf(provider);
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const codeVerifier = oidc.randomPKCECodeVerifier();
    await this.pending.save(state, { providerId, redirectTo: safeRedirectTarget(redirectTo), codeVerifier, nonce });
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: publicBaseUrl(request, this.config, this.identity.config.trustProxy) + oidcCallbackPath(providerId),
      scope: provider.row.scopes || DEFAULT_SCOPES,
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
    });
    const cookie = [
      `${OIDC_STATE_COOKIE}=${state}`,
      `Path=${STATE_COOKIE_PATH}`,
      'HttpOnly',
      'SameSite=Lax',
      `Max-Age=${PENDING_SIGN_IN_TTL_MS / 1000}`,
      ...(isSecureRequest(request, this.identity.config.trustProxy) ? ['Secure'] : []),
    ].join('; ');
    return redirectResult(302, url.href, { 'Set-Cookie': cookie });
  }

  /** The provider's redirect back: checks state (against the cookie and the stored row), code, nonce and issuer. */
  async callback(request: RouteRequest, providerId: string, query: Record<string, string>) {
    return auditedSsoSignIn(this.identity, request, 'oidc', providerId, () => this.finishSignIn(request, providerId, query));
  }

  private async finishSignIn(request: RouteRequest, providerId: string, query: Record<string, string>) {
    if (query.error) {
      throw new SignInFailure(400, `OIDC sign-in failed: the provider answered ${query.error}${query.error_description ? `: ${query.error_description}` : ''}`.slice(0, 500), 'sso-provider-error');
    }
    const state = query.state;
    if (!state) throw new SignInFailure(400, 'OIDC sign-in failed: the callback carries no state', 'sso-invalid-state');
    const cookieState = readCookie(request.headers.cookie, OIDC_STATE_COOKIE);
    if (cookieState !== state) {
      throw new SignInFailure(400, 'OIDC sign-in failed: the state does not match the sign-in this browser started; start the sign-in again', 'sso-invalid-state');
    }
    const pending = await this.pending.take(state);
    if (!pending || pending.providerId !== providerId) {
      throw new SignInFailure(400, 'OIDC sign-in failed: unknown, used or expired state; start the sign-in again', 'sso-invalid-state');
    }
    const provider = await this.providers.resolveForSignIn(providerId, 'oidc');
    const configuration = await this.configurationOf(provider);
    const callbackUrl = new URL(publicBaseUrl(request, this.config, this.identity.config.trustProxy) + oidcCallbackPath(providerId));
    for (const [name, value] of Object.entries(query)) callbackUrl.searchParams.set(name, value);

    let claims: Record<string, unknown>;
    try {
      const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      claims = { ...(tokens.claims() ?? {}) };
      if (this.needsUserInfo(provider, claims) && configuration.serverMetadata().userinfo_endpoint) {
        const userInfo = await oidc.fetchUserInfo(configuration, tokens.access_token, claims.sub as string);
        claims = { ...userInfo, ...claims };
      }
    } catch (error) {
      if (error instanceof HttpError) throw error;
      this.identity.logger.warn({ err: error, providerId }, 'OIDC sign-in rejected');
      const refused = protocolError(error);
      throw refused.status === 400 ? new SignInFailure(400, refused.message, 'sso-rejected') : refused;
    }
    return completeSsoSignIn(this.identity, request, provider, this.identityFrom(provider, claims), pending.redirectTo);
  }

  private needsUserInfo(provider: ResolvedSsoProvider, claims: Record<string, unknown>): boolean {
    const groupClaim = provider.row.groupClaim;
    return typeof claims.email !== 'string' || (!!groupClaim && claimAt(claims, groupClaim) === undefined);
  }

  private identityFrom(provider: ResolvedSsoProvider, claims: Record<string, unknown>): ExternalIdentity {
    const groupClaim = provider.row.groupClaim;
    const name = [claims.name, claims.preferred_username].find((value): value is string => typeof value === 'string' && value !== '');
    return {
      subject: String(claims.sub),
      email: typeof claims.email === 'string' ? claims.email : undefined,
      emailVerified: claims.email_verified === true || claims.email_verified === 'true',
      name,
      groups: groupClaim ? groupsFrom(claimAt(claims, groupClaim)) : undefined,
    };
  }
}
