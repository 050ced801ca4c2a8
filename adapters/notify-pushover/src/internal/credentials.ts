import type { AdapterContext } from '@holdfast/sdk';

/** A secret found for the request, or why there is none (the reason never holds a secret). */
export type SecretLookup = { ok: true; value: string } | { ok: false; reason: string };

/**
 * The token from the assigned credential profile (type TOKEN, role `primary`) wins; the config field is the
 * fallback for instances built without a profile. Neither: a failure saying a profile is needed.
 */
export function resolveToken(context: AdapterContext, configValue: string | undefined, fieldName: string): SecretLookup {
  const primary = context.credentials?.primary;
  if (primary?.type === 'TOKEN' && typeof primary.token === 'string' && primary.token !== '') return { ok: true, value: primary.token };
  if (configValue) return { ok: true, value: configValue };
  return { ok: false, reason: `a credential profile of type TOKEN is needed (or set ${fieldName})` };
}
