import { defineRoute, lineText, routeResult, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import { AUDIT_ACTIONS } from '../audit/audit-trail.js';
import { actorOf, errors, idParams } from '../routes/common.js';
import type { IdentityServices } from '../services.js';
import type { SsoProviderStore } from './provider-store.js';

const httpUrl = lineText({ min: 1, max: 2000 }).refine((value) => /^https?:\/\/[^\s]+$/i.test(value), 'must be an http(s) URL');
const groupMappingSchema = z.strictObject({
  claimValue: lineText({ min: 1, max: 500 }).describe('Group value as the identity provider sends it'),
  groupId: lineText({ min: 1, max: 100 }).describe('Holdfast group the value maps to'),
});
const attributeMappingSchema = z.strictObject({
  email: lineText({ min: 1, max: 500 }).optional().describe('SAML attribute holding the email (default email, mail, or an email NameID)'),
  name: lineText({ min: 1, max: 500 }).optional().describe('SAML attribute holding the display name (default displayName, name)'),
});

const editableFields = {
  name: lineText({ min: 1, max: 200 }).trim(),
  enabled: z.boolean(),
  allowProvisioning: z.boolean().describe('First sign-in of an unknown email creates the user; off: refused'),
  domain: lineText({ max: 1000 }).nullable().describe('Allowed email domains, comma separated; empty or null: any'),
  issuer: httpUrl.nullable().describe('OIDC issuer (discovery at /.well-known/openid-configuration); SAML: expected IdP entity id'),
  discoveryEndpoint: httpUrl.nullable().describe('OIDC: explicit discovery document URL, when not under the issuer'),
  clientId: lineText({ max: 500 }).describe('OIDC client id; SAML: this service provider\'s entity id (default urn:holdfast:sp:<providerId>)'),
  clientSecret: z.string().max(2000).describe('OIDC client secret; stored encrypted, never returned; empty on update keeps the stored one'),
  scopes: lineText({ max: 1000 }).nullable().describe('OIDC scopes (default "openid email profile")'),
  samlEntryPoint: httpUrl.nullable().describe('SAML: the IdP single sign-on URL (HTTP-Redirect binding)'),
  samlCertificate: z.string().max(20_000).nullable().describe('SAML: the IdP signing certificate (PEM or base64)'),
  groupClaim: lineText({ max: 200 }).nullable().describe('Claim (OIDC, dotted path allowed) or attribute (SAML) carrying group names'),
  groupMappings: z.array(groupMappingSchema).max(500).describe('Synced on every sign-in: first matching row sets the user\'s group; none clears it'),
  attributeMapping: attributeMappingSchema.nullable(),
};

const createBody = z.strictObject({
  providerId: z
    .string()
    .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'lower-case letters, digits, - and _ (at most 63), starting with a letter or digit')
    .describe('Public id used in sign-in URLs and OIDC_AUTO_REDIRECT'),
  type: z.enum(['oidc', 'saml']),
  ...editableFields,
  enabled: editableFields.enabled.optional(),
  allowProvisioning: editableFields.allowProvisioning.optional(),
  domain: editableFields.domain.optional(),
  issuer: editableFields.issuer.optional(),
  discoveryEndpoint: editableFields.discoveryEndpoint.optional(),
  clientId: editableFields.clientId.optional(),
  clientSecret: editableFields.clientSecret.optional(),
  scopes: editableFields.scopes.optional(),
  samlEntryPoint: editableFields.samlEntryPoint.optional(),
  samlCertificate: editableFields.samlCertificate.optional(),
  groupClaim: editableFields.groupClaim.optional(),
  groupMappings: editableFields.groupMappings.optional(),
  attributeMapping: editableFields.attributeMapping.optional(),
});
const updateBody = z.strictObject(editableFields).partial();

const providerSchema = z
  .object({
    id: z.string(),
    providerId: z.string(),
    type: z.enum(['oidc', 'saml']),
    name: z.string(),
    enabled: z.boolean(),
    allowProvisioning: z.boolean(),
    domain: z.string().nullable(),
    issuer: z.string().nullable(),
    discoveryEndpoint: z.string().nullable(),
    clientId: z.string(),
    hasClientSecret: z.boolean().describe('Whether a client secret is stored (the secret itself is never returned)'),
    scopes: z.string().nullable(),
    samlEntryPoint: z.string().nullable(),
    samlCertificate: z.string().nullable(),
    groupClaim: z.string().nullable(),
    groupMappings: z.array(z.object({ claimValue: z.string(), groupId: z.string() })),
    attributeMapping: z.object({ email: z.string().optional(), name: z.string().optional() }).nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'SsoProvider' });

/** `/api/sso/providers`: provider administration (settings permissions). */
export function ssoAdminRoutes(identity: IdentityServices, providers: SsoProviderStore): RouteDefinition[] {
  const { audit } = identity;
  return [
    defineRoute({
      method: 'GET',
      path: '/api/sso/providers',
      summary: 'List single sign-on providers (OIDC and SAML)',
      tags: ['sso'],
      access: { permission: 'settings:read' },
      responses: { 200: { description: 'Providers, without secrets.', schema: z.object({ providers: z.array(providerSchema) }) }, ...errors(401, 403) },
      handler: async () => ({ providers: (await providers.list()).map((row) => providers.view(row)) }),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/sso/providers/:id',
      summary: 'One single sign-on provider',
      tags: ['sso'],
      access: { permission: 'settings:read' },
      request: { params: idParams },
      responses: { 200: { description: 'The provider, without its secret.', schema: providerSchema }, ...errors(401, 403, 404) },
      handler: async (request) => providers.view(await providers.get(request.params.id)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/sso/providers',
      summary: 'Add a single sign-on provider',
      tags: ['sso'],
      access: { permission: 'settings:write' },
      request: { body: createBody },
      responses: { 201: { description: 'Created.', schema: providerSchema }, ...errors(400, 401, 403, 409) },
      handler: async (request) => {
        const row = await providers.create(request.body);
        await audit.record(actorOf(request), {
          action: AUDIT_ACTIONS.create,
          resource: 'sso-provider',
          resourceId: row.id,
          details: { providerId: row.providerId, type: row.type, name: row.name, hasClientSecret: row.clientSecret !== '' },
        });
        return routeResult({ status: 201, body: providers.view(row) });
      },
    }),
    defineRoute({
      method: 'PUT',
      path: '/api/sso/providers/:id',
      summary: 'Change a single sign-on provider (providerId and type are fixed)',
      tags: ['sso'],
      access: { permission: 'settings:write' },
      request: { params: idParams, body: updateBody },
      responses: { 200: { description: 'Updated.', schema: providerSchema }, ...errors(400, 401, 403, 404) },
      handler: async (request) => {
        const row = await providers.update(request.params.id, request.body);
        const { clientSecret, ...changed } = request.body;
        await audit.record(actorOf(request), {
          action: AUDIT_ACTIONS.update,
          resource: 'sso-provider',
          resourceId: row.id,
          details: { providerId: row.providerId, fields: Object.keys(changed), clientSecretChanged: !!clientSecret },
        });
        return providers.view(row);
      },
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/sso/providers/:id',
      summary: 'Remove a single sign-on provider (linked users keep their accounts and other sign-in methods)',
      tags: ['sso'],
      access: { permission: 'settings:write' },
      request: { params: idParams },
      responses: { 204: { description: 'Deleted.' }, ...errors(401, 403, 404) },
      handler: async (request) => {
        const row = await providers.delete(request.params.id);
        await audit.record(actorOf(request), { action: AUDIT_ACTIONS.delete, resource: 'sso-provider', resourceId: row.id, details: { providerId: row.providerId, type: row.type } });
        return routeResult({ status: 204 });
      },
    }),
  ];
}
