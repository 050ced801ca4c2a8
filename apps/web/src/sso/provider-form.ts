import { z } from 'zod';
import type { components } from '@holdfast/client';

export type SsoProvider = components['schemas']['SsoProvider'];

/** The editor's state: every field as typed (strings stay strings until they are sent). */
export interface ProviderForm {
  providerId: string;
  type: 'oidc' | 'saml';
  name: string;
  enabled: boolean;
  allowProvisioning: boolean;
  domain: string;
  issuer: string;
  discoveryEndpoint: string;
  clientId: string;
  /** Write-only: empty means "keep the stored one" when editing. */
  clientSecret: string;
  scopes: string;
  samlEntryPoint: string;
  samlCertificate: string;
  groupClaim: string;
  groupMappings: Array<{ claimValue: string; groupId: string }>;
  attributeEmail: string;
  attributeName: string;
}

export const emptyProviderForm: ProviderForm = {
  providerId: '',
  type: 'oidc',
  name: '',
  enabled: true,
  allowProvisioning: false,
  domain: '',
  issuer: '',
  discoveryEndpoint: '',
  clientId: '',
  clientSecret: '',
  scopes: '',
  samlEntryPoint: '',
  samlCertificate: '',
  groupClaim: '',
  groupMappings: [],
  attributeEmail: '',
  attributeName: '',
};

/** A stored provider as editor state; the secret is never part of it (the API does not return it). */
export function formOf(provider: SsoProvider): ProviderForm {
  return {
    providerId: provider.providerId,
    type: provider.type,
    name: provider.name,
    enabled: provider.enabled,
    allowProvisioning: provider.allowProvisioning,
    domain: provider.domain ?? '',
    issuer: provider.issuer ?? '',
    discoveryEndpoint: provider.discoveryEndpoint ?? '',
    clientId: provider.clientId,
    clientSecret: '',
    scopes: provider.scopes ?? '',
    samlEntryPoint: provider.samlEntryPoint ?? '',
    samlCertificate: provider.samlCertificate ?? '',
    groupClaim: provider.groupClaim ?? '',
    groupMappings: provider.groupMappings.map((row) => ({ ...row })),
    attributeEmail: provider.attributeMapping?.email ?? '',
    attributeName: provider.attributeMapping?.name ?? '',
  };
}

const optionalUrl = z
  .string()
  .trim()
  .refine((value) => value === '' || /^https?:\/\/\S+$/i.test(value), 'Enter an http(s) URL');

/** The rules the server applies (admin-routes.ts and the provider store), checked before anything is sent. */
export const providerFormSchema = z
  .object({
    providerId: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'Lower-case letters, digits, - and _ (at most 63), starting with a letter or digit'),
    type: z.enum(['oidc', 'saml']),
    name: z.string().trim().min(1, 'Enter a name').max(200),
    issuer: optionalUrl,
    discoveryEndpoint: optionalUrl,
    samlEntryPoint: optionalUrl,
    samlCertificate: z.string().max(20_000),
    clientId: z.string().trim().max(500),
    groupMappings: z.array(z.object({ claimValue: z.string().trim().min(1, 'Enter the group value'), groupId: z.string().min(1, 'Choose a group') })),
  })
  .loose()
  .superRefine((form, context) => {
    const missing = (path: string, message: string) => context.addIssue({ code: 'custom', path: [path], message });
    if (form.type === 'oidc') {
      if (!form.issuer && !form.discoveryEndpoint) missing('issuer', 'Enter the issuer (or a discovery URL)');
      if (!form.clientId) missing('clientId', 'Enter the client id');
    } else {
      if (!form.samlEntryPoint) missing('samlEntryPoint', 'Enter the IdP sign-on URL');
      if (!form.samlCertificate.trim()) missing('samlCertificate', 'Paste the IdP signing certificate');
    }
  });

const orNull = (value: string) => (value.trim() === '' ? null : value.trim());

/**
 * The update body: the fields of the provider's protocol plus the common ones. The client secret is sent only
 * when typed (an empty one keeps the stored secret).
 */
export function updateBodyOf(form: ProviderForm) {
  return fieldsOf(form, false);
}

/** The create body: as for an update, plus providerId and type (both fixed afterwards). */
export function createBodyOf(form: ProviderForm) {
  return { ...fieldsOf(form, true), providerId: form.providerId, type: form.type };
}

function fieldsOf(form: ProviderForm, creating: boolean) {
  const common = {
    name: form.name.trim(),
    enabled: form.enabled,
    allowProvisioning: form.allowProvisioning,
    domain: orNull(form.domain),
    groupClaim: orNull(form.groupClaim),
    groupMappings: form.groupMappings.map((row) => ({ claimValue: row.claimValue.trim(), groupId: row.groupId })),
  };
  const protocol =
    form.type === 'oidc'
      ? {
          issuer: orNull(form.issuer),
          discoveryEndpoint: orNull(form.discoveryEndpoint),
          clientId: form.clientId.trim(),
          scopes: orNull(form.scopes),
          ...(form.clientSecret ? { clientSecret: form.clientSecret } : {}),
        }
      : {
          issuer: orNull(form.issuer),
          samlEntryPoint: orNull(form.samlEntryPoint),
          samlCertificate: orNull(form.samlCertificate),
          ...(form.clientId.trim() || !creating ? { clientId: form.clientId.trim() } : {}),
          attributeMapping:
            form.attributeEmail.trim() || form.attributeName.trim()
              ? { ...(form.attributeEmail.trim() ? { email: form.attributeEmail.trim() } : {}), ...(form.attributeName.trim() ? { name: form.attributeName.trim() } : {}) }
              : null,
        };
  return { ...common, ...protocol };
}
