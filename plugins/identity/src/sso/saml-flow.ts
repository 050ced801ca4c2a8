import { HttpError, routeResult, type RouteRequest } from '@holdfast/kernel';
import type { CacheProvider, Profile, SAML } from '@node-saml/node-saml';
import type { IdentityServices } from '../services.js';
import { SignInFailure } from '../audit/sign-in-failure.js';
import { auditedSsoSignIn, completeSsoSignIn } from './complete-sign-in.js';
import { PENDING_SIGN_IN_TTL_MS, type PendingSignIns } from './pending-sign-ins.js';
import type { ResolvedSsoProvider, SsoProviderStore } from './provider-store.js';
import { publicBaseUrl, redirectResult, safeRedirectTarget } from './redirects.js';
import type { SsoConfig } from './sso-config.js';
import type { ExternalIdentity } from './types.js';

/** Allowed clock difference between the IdP and this server when checking NotBefore/NotOnOrAfter. */
const CLOCK_SKEW_MS = 60_000;

/** ACS path of a provider (the IdP posts the signed response here). */
export function samlAcsPath(providerId: string): string {
  return `/api/auth/sso/saml/${encodeURIComponent(providerId)}/acs`;
}

/** SP metadata path of a provider. */
export function samlMetadataPath(providerId: string): string {
  return `/api/auth/sso/saml/${encodeURIComponent(providerId)}/metadata`;
}

const OID_MAIL = 'urn:oid:0.9.2342.19200300.100.1.3';
const OID_DISPLAY_NAME = 'urn:oid:2.16.840.1.113730.3.1.241';

function firstString(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (Array.isArray(value)) return value.find((entry): entry is string => typeof entry === 'string' && entry !== '');
  return undefined;
}

/**
 * InResponseTo bookkeeping of node-saml over the pending sign-in rows: an AuthnRequest id is stored when the
 * sign-in starts, a response must name one issued for the same provider, and it is used up by the response.
 */
function pendingRequestCache(pending: PendingSignIns, providerId: string): CacheProvider {
  const key = (id: string) => `saml:${providerId}:${id}`;
  return {
    async saveAsync(id, value) {
      await pending.save(key(id), { providerId, redirectTo: '/', issuedAt: value });
      return { value, createdAt: Date.now() };
    },
    async getAsync(id) {
      return (await pending.peek(key(id)))?.issuedAt ?? null;
    },
    async removeAsync(id) {
      if (!id) return null;
      return (await pending.take(key(id))) ? id : null;
    },
  };
}

/** node-saml's messages, with the ones that do not say what was wrong made plain. */
function explain(message: string): string {
  if (message.startsWith('No valid subject confirmation')) {
    return `the assertion is expired or not yet valid (subject confirmation time window) [${message}]`;
  }
  return message;
}

/** SAML 2.0 Web Browser SSO as a service provider (node-saml): signed assertions are required. */
export class SamlFlow {
  constructor(
    private readonly identity: IdentityServices,
    private readonly providers: SsoProviderStore,
    private readonly pending: PendingSignIns,
    private readonly config: SsoConfig,
  ) {}

  private async samlFor(request: RouteRequest, provider: ResolvedSsoProvider): Promise<SAML> {
    // Loaded by the first SAML request (XML signature and parser libraries), not by every server.
    const { SAML, ValidateInResponseTo } = await import('@node-saml/node-saml');
    const { row } = provider;
    const base = publicBaseUrl(request, this.config, this.identity.config.trustProxy);
    return new SAML({
      callbackUrl: base + samlAcsPath(row.providerId),
      entryPoint: row.samlEntryPoint ?? undefined,
      issuer: provider.clientId,
      audience: provider.clientId,
      idpCert: row.samlCertificate ?? '',
      ...(row.issuer ? { idpIssuer: row.issuer } : {}),
      wantAssertionsSigned: true,
      wantAuthnResponseSigned: false,
      acceptedClockSkewMs: CLOCK_SKEW_MS,
      validateInResponseTo: ValidateInResponseTo.always,
      requestIdExpirationPeriodMs: PENDING_SIGN_IN_TTL_MS,
      cacheProvider: pendingRequestCache(this.pending, row.providerId),
      identifierFormat: null,
      disableRequestedAuthnContext: true,
    });
  }

  /** The SP metadata XML for the IdP administrator (entity id, ACS URL). */
  async metadata(request: RouteRequest, providerId: string) {
    const provider = await this.providers.resolveForSignIn(providerId, 'saml', { allowDisabled: true });
    const saml = await this.samlFor(request, provider);
    return routeResult({ status: 200, headers: { 'Content-Type': 'application/samlmetadata+xml; charset=utf-8' }, body: saml.generateServiceProviderMetadata(null, null) });
  }

  /** Starts a sign-in: an AuthnRequest through the HTTP-Redirect binding; RelayState carries the landing path. */
  async start(request: RouteRequest, providerId: string, redirectTo: string | undefined) {
    const provider = await this.providers.resolveForSignIn(providerId, 'saml');
    const url = await (await this.samlFor(request, provider)).getAuthorizeUrlAsync(safeRedirectTarget(redirectTo), undefined, {});
    return redirectResult(302, url);
  }

  /** The assertion consumer service: validates the posted response, then signs the user in. */
  async acs(request: RouteRequest, providerId: string, form: { SAMLResponse: string; RelayState?: string }) {
    return auditedSsoSignIn(this.identity, request, 'saml', providerId, () => this.finishSignIn(request, providerId, form));
  }

  private async finishSignIn(request: RouteRequest, providerId: string, form: { SAMLResponse: string; RelayState?: string }) {
    const provider = await this.providers.resolveForSignIn(providerId, 'saml');
    let profile: Profile | null;
    try {
      ({ profile } = await (await this.samlFor(request, provider)).validatePostResponseAsync({ SAMLResponse: form.SAMLResponse, RelayState: form.RelayState ?? '' }));
    } catch (error) {
      this.identity.logger.warn({ err: error, providerId }, 'SAML response rejected');
      const reason = explain(error instanceof Error ? error.message : 'invalid response');
      throw new SignInFailure(400, `SAML sign-in failed: ${reason}`.slice(0, 500), 'sso-rejected');
    }
    if (!profile) throw new SignInFailure(400, 'SAML sign-in failed: the response carries no assertion', 'sso-rejected');
    return completeSsoSignIn(this.identity, request, provider, this.identityFrom(provider, profile), safeRedirectTarget(form.RelayState));
  }

  private identityFrom(provider: ResolvedSsoProvider, profile: Profile): ExternalIdentity {
    const names = provider.attributeMapping;
    const attribute = (name: string | undefined) => (name ? firstString(profile[name]) : undefined);
    const nameIdEmail = profile.nameID?.includes('@') ? profile.nameID : undefined;
    const email = attribute(names.email) ?? attribute('email') ?? attribute('mail') ?? attribute(OID_MAIL) ?? nameIdEmail;
    const name = attribute(names.name) ?? attribute('displayName') ?? attribute('name') ?? attribute(OID_DISPLAY_NAME);
    const groupClaim = provider.row.groupClaim;
    const rawGroups = groupClaim ? profile[groupClaim] : undefined;
    const groups = groupClaim
      ? (Array.isArray(rawGroups) ? rawGroups : [rawGroups]).filter((group): group is string => typeof group === 'string' && group !== '')
      : undefined;
    return {
      subject: profile.nameID,
      email,
      // The assertion is signed by the IdP the administrator configured: its email attribute is taken as verified.
      emailVerified: true,
      name,
      groups,
    };
  }
}
