// The webhook URL of a chat channel (Discord, Slack, Teams): one rule for where it comes from, shared by the channels.
import type { AdapterContext } from '@holdfast/kernel/adapter';

/** A secret found for the request, or why there is none (the reason never holds a secret). */
export type SecretLookup = { ok: true; value: string } | { ok: false; reason: string };

function isHttpUrl(text: string): boolean {
  try {
    return /^https?:$/.test(new URL(text).protocol);
  } catch {
    return false;
  }
}

/**
 * The webhook URL (it embeds the webhook's token): the assigned WEBHOOK credential profile (role `primary`,
 * `secretUrl` or else `url`) wins; the config field is the fallback for instances built without a profile.
 * Neither: a failure saying a profile is needed.
 */
export function resolveWebhookUrl(context: AdapterContext, configValue: string | undefined, fieldName: string): SecretLookup {
  const primary = context.credentials?.primary;
  if (primary?.type === 'WEBHOOK') {
    const fromProfile = [primary.secretUrl, primary.url].find((value): value is string => typeof value === 'string' && value !== '');
    if (fromProfile !== undefined) {
      return isHttpUrl(fromProfile) ? { ok: true, value: fromProfile } : { ok: false, reason: 'the WEBHOOK credential profile holds no http(s) URL' };
    }
  }
  if (configValue) return { ok: true, value: configValue };
  return { ok: false, reason: `a credential profile of type WEBHOOK is needed (or set ${fieldName})` };
}
