import { ValidationError, type AnyAdapterDefinition } from '@holdfast/kernel';
import { secretTargetFieldsOf } from '@holdfast/kernel';

/** What the API shows in place of the credentials of a URL (`https://user:***@host/?token=***`). */
export const REDACTED = '***';

/** Query parameters that carry credentials by common convention (compared lower-case, `-` and `_` ignored). */
const CREDENTIAL_PARAMS = new Set([
  'token', 'key', 'apikey', 'accesstoken', 'authtoken', 'auth', 'authorization', 'sig', 'signature', 'secret',
  'clientsecret', 'password', 'pass', 'pwd', 'code', 'xamzsignature', 'xamzcredential', 'xamzsecuritytoken',
  'xgoogsignature', 'sv', 'se', 'session', 'sessiontoken', 'privatetoken', 'appkey', 'apptoken', 'accesskey',
]);

function isCredentialParam(name: string): boolean {
  return CREDENTIAL_PARAMS.has(name.toLowerCase().replace(/[-_]/g, ''));
}

function parseUrl(value: unknown): URL | null {
  if (typeof value !== 'string' || !/^[a-z][a-z0-9+.-]*:\/\//i.test(value)) return null;
  try {
    return new URL(value);
  } catch {
    return null;
  }
}

/** True when `value` is a URL carrying credentials: `user:password@` or a token-like query parameter. */
export function hasUrlCredentials(value: unknown): boolean {
  const url = parseUrl(value);
  if (!url) return false;
  return url.password !== '' || [...url.searchParams.keys()].some(isCredentialParam);
}

/** The URL with its password and token-like parameter values replaced by {@link REDACTED}. */
export function redactUrl(value: string): string {
  const url = parseUrl(value);
  if (!url) return value;
  if (url.password !== '') url.password = REDACTED;
  for (const name of [...url.searchParams.keys()]) if (isCredentialParam(name)) url.searchParams.set(name, REDACTED);
  // URLSearchParams encodes "*"; keep the marker readable so a client can send the view back unchanged.
  return url.href.replaceAll('%2A%2A%2A', REDACTED);
}

/** Top-level string fields of a config that hold URLs with credentials: stored sealed, shown redacted. */
export function credentialUrlFields(config: Record<string, unknown>): string[] {
  return Object.keys(config).filter((field) => hasUrlCredentials(config[field]));
}

/** True when a submitted secret means "keep the stored one" (omitted, null or empty). */
export function isKeepMarker(value: unknown): boolean {
  return value === undefined || value === null || value === '';
}

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);

/**
 * Builds the plaintext of an update or connection test from what the caller sent and what is stored. A stored
 * secret (a secret field sent empty or omitted, or the credentials of a URL sent back redacted) is reused only
 * while every field saying where it goes (see `secretTarget` in the sdk) is unchanged; otherwise a 400 names the
 * secret to send again, so a caller who may edit a config cannot send its stored secret to a host they choose.
 */
export function mergeStoredSecrets(
  definition: AnyAdapterDefinition,
  submitted: Record<string, unknown>,
  storedPlain: Record<string, unknown> | null,
  secrets: readonly string[],
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...submitted };
  const reused: string[] = [];
  const problems: Array<{ path: string; message: string }> = [];
  for (const field of credentialUrlFields(storedPlain ?? {})) {
    const stored = storedPlain![field] as string;
    if (merged[field] === redactUrl(stored)) {
      merged[field] = stored;
      reused.push(field);
    } else if (typeof merged[field] === 'string' && (merged[field] as string).includes(REDACTED) && hasUrlCredentials(merged[field])) {
      problems.push({ path: `body.config.${field}`, message: 'send the credentials of this URL again: the stored ones belong to the saved address' });
    }
  }
  for (const field of secrets) {
    if (!isKeepMarker(merged[field])) continue;
    const previous = storedPlain?.[field];
    if (previous === undefined || previous === null) {
      delete merged[field];
      continue;
    }
    merged[field] = previous;
    reused.push(field);
  }
  if (reused.length > 0 && storedPlain) {
    // Compare parsed values, so an omitted field and its default count as unchanged.
    const parsed = definition.configSchema.safeParse(merged);
    const candidate = parsed.success ? (parsed.data as Record<string, unknown>) : merged;
    const changed = secretTargetFieldsOf(definition.configSchema).filter((field) => !same(candidate[field], storedPlain[field]));
    if (changed.length > 0) {
      for (const field of reused) {
        problems.push({
          path: `body.config.${field}`,
          message: `required again because ${changed.join(', ')} changed: a stored secret is only sent where it was saved for`,
        });
      }
    }
  }
  if (problems.length > 0) {
    throw new ValidationError(`Invalid request: ${problems.map((p) => `${p.path.slice(5)}: ${p.message}`).join('; ')}`, problems);
  }
  return merged;
}
