import { defineRoute, HttpError, lineText, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import { errors } from '../routes/common.js';
import type { OidcFlow } from './oidc-flow.js';
import type { SsoProviderStore } from './provider-store.js';
import type { SamlFlow } from './saml-flow.js';
import type { SsoConfig } from './sso-config.js';

const providerParams = z.object({ providerId: z.string().min(1).max(63) });
const startQuery = z.object({ redirectTo: lineText({ max: 2000 }).optional().describe('Local path to land on after sign-in (default /)') });
const callbackQuery = z
  .object({
    code: z.string().max(4096).optional(),
    state: z.string().max(512).optional(),
    iss: z.string().max(2000).optional(),
    error: z.string().max(200).optional(),
    error_description: z.string().max(2000).optional(),
  })
  .catchall(z.string().max(4096));
const acsBody = z.object({
  SAMLResponse: z.string().min(1).max(200_000).describe('Base64 SAML Response from the identity provider'),
  RelayState: z.string().max(2000).optional(),
});
const redirectBody = z.object({ location: z.string() }).meta({ id: 'SsoRedirect', description: 'The redirect target, also in the Location header.' });
const redirect = { description: 'Redirect to the identity provider.', schema: redirectBody };
const signedIn = { description: 'Signed in: the session cookie is set and the browser goes to the landing path.', schema: redirectBody };

/** The public sign-in side of single sign-on: provider list, start, OIDC callback, SAML ACS and metadata. */
export function ssoSignInRoutes(config: SsoConfig, providers: SsoProviderStore, oidcFlow: OidcFlow, samlFlow: SamlFlow): RouteDefinition[] {
  const startOf = async (request: Parameters<OidcFlow['start']>[0], providerId: string, redirectTo: string | undefined) => {
    const row = await providers.findByProviderId(providerId);
    if (!row) throw new HttpError(404, `No SSO provider "${providerId}"`);
    return row.type === 'saml' ? samlFlow.start(request, providerId, redirectTo) : oidcFlow.start(request, providerId, redirectTo);
  };
  return [
    defineRoute({
      method: 'GET',
      path: '/api/auth/sso/providers',
      summary: 'Enabled single sign-on providers for the sign-in page, and the automatic redirect (OIDC_AUTO_REDIRECT)',
      tags: ['auth', 'sso'],
      access: { public: true },
      responses: {
        200: {
          description: 'Providers to offer.',
          schema: z.object({
            providers: z.array(z.object({ providerId: z.string(), name: z.string(), type: z.enum(['oidc', 'saml']), startUrl: z.string() })),
            autoRedirect: z.string().nullable().describe('Provider id the sign-in page redirects to at once, or null'),
          }),
        },
        ...errors(429),
      },
      handler: async () => {
        const enabled = (await providers.list()).filter((row) => row.enabled);
        return {
          providers: enabled.map((row) => ({
            providerId: row.providerId,
            name: row.name,
            type: row.type === 'saml' ? ('saml' as const) : ('oidc' as const),
            startUrl: `/api/auth/sso/${row.type === 'saml' ? 'saml' : 'oidc'}/${encodeURIComponent(row.providerId)}/start`,
          })),
          autoRedirect: enabled.some((row) => row.providerId === config.autoRedirectProviderId) ? config.autoRedirectProviderId! : null,
        };
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/auth/sso/entry',
      summary: 'Sign-in entry: redirects to the provider named by OIDC_AUTO_REDIRECT',
      tags: ['auth', 'sso'],
      access: { public: true },
      request: { query: startQuery },
      responses: { 302: redirect, ...errors(404, 429) },
      handler: async (request) => {
        const providerId = config.autoRedirectProviderId;
        if (!providerId) throw new HttpError(404, 'No automatic single sign-on redirect is configured (OIDC_AUTO_REDIRECT is unset)');
        return startOf(request, providerId, request.query.redirectTo);
      },
    }),
    defineRoute({
      method: 'GET',
      path: '/api/auth/sso/oidc/:providerId/start',
      summary: 'Start an OIDC sign-in (authorization code with PKCE)',
      tags: ['auth', 'sso'],
      access: { public: true },
      request: { params: providerParams, query: startQuery },
      responses: { 302: redirect, ...errors(400, 403, 404, 429), 502: { description: 'The provider could not be discovered.' } },
      handler: (request) => oidcFlow.start(request, request.params.providerId, request.query.redirectTo),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/auth/sso/oidc/:providerId/callback',
      summary: 'OIDC redirect URI: checks state, nonce, PKCE and issuer, then signs in',
      tags: ['auth', 'sso'],
      access: { public: true },
      rateLimit: 'auth',
      request: { params: providerParams, query: callbackQuery },
      responses: { 303: signedIn, ...errors(400, 403, 404, 429), 502: { description: 'The provider could not be reached.' } },
      handler: (request) => oidcFlow.callback(request, request.params.providerId, request.query as Record<string, string>),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/auth/sso/saml/:providerId/start',
      summary: 'Start a SAML sign-in (AuthnRequest, HTTP-Redirect binding)',
      tags: ['auth', 'sso'],
      access: { public: true },
      request: { params: providerParams, query: startQuery },
      responses: { 302: redirect, ...errors(403, 404, 429) },
      handler: (request) => samlFlow.start(request, request.params.providerId, request.query.redirectTo),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/auth/sso/saml/:providerId/acs',
      summary: 'SAML assertion consumer service: validates the signed response (signature, audience, time window, InResponseTo), then signs in',
      tags: ['auth', 'sso'],
      access: { public: true },
      rateLimit: 'auth',
      request: { params: providerParams, body: acsBody, bodyType: 'form' },
      responses: { 303: signedIn, ...errors(400, 403, 404, 429) },
      handler: (request) => samlFlow.acs(request, request.params.providerId, request.body),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/auth/sso/saml/:providerId/metadata',
      summary: 'SAML service provider metadata (entity id and ACS URL) for the identity provider',
      tags: ['auth', 'sso'],
      access: { public: true },
      request: { params: providerParams },
      responses: { 200: { description: 'SP metadata XML.', contentType: 'application/samlmetadata+xml', schema: z.string() }, ...errors(404, 429) },
      handler: (request) => samlFlow.metadata(request, request.params.providerId),
    }),
  ];
}
