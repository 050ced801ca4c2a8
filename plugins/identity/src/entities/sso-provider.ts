import { defineEntity, p, type InferEntity } from '@mikro-orm/core';

/** An OIDC or SAML single sign-on provider (SPEC "Other records"). Client id and secret are stored encrypted. */
export const SsoProviderEntity = defineEntity({
  name: 'SsoProvider',
  tableName: 'sso_providers',
  properties: {
    id: p.string().primary().length(36),
    providerId: p.string().unique('sso_providers_provider_id_unique'),
    type: p.string().default('oidc'),
    name: p.string(),
    adapterId: p.string(),
    domain: p.string().nullable(),
    domainVerified: p.boolean().default(false),
    issuer: p.text().nullable(),
    discoveryEndpoint: p.text().nullable(),
    authorizationEndpoint: p.text().nullable(),
    tokenEndpoint: p.text().nullable(),
    userInfoEndpoint: p.text().nullable(),
    jwksEndpoint: p.text().nullable(),
    samlEntryPoint: p.text().nullable(),
    samlCertificate: p.text().nullable(),
    clientId: p.text(),
    clientSecret: p.text(),
    enabled: p.boolean().default(true),
    allowProvisioning: p.boolean().default(true),
    /** SSO settings (migration 003-identity-sso): OIDC scopes, group claim + mapping JSON, SAML attribute names JSON. */
    scopes: p.text().nullable(),
    groupClaim: p.string().nullable(),
    groupMappings: p.text().default('[]'),
    attributeMapping: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

/** A stored SSO provider row. */
export type SsoProvider = InferEntity<typeof SsoProviderEntity>;
