// resolveWebhookUrl, shared by the Discord, Slack and Teams channels: the WEBHOOK profile wins, the config field is
// the fallback, and a reason never holds the secret URL.
import { describe, expect, it } from 'vitest';
import { resolveWebhookUrl, silentLogger, type AdapterContext } from '../src/index.js';

const context = (primary?: Record<string, unknown>) => ({ logger: silentLogger, credentials: primary ? { primary } : undefined }) as unknown as AdapterContext;

describe('resolveWebhookUrl', () => {
  it('takes the WEBHOOK profile (secretUrl, then url) over the config field', () => {
    expect(resolveWebhookUrl(context({ type: 'WEBHOOK', secretUrl: 'https://a/s', url: 'https://a/u' }), 'https://c', 'webhookUrl')).toEqual({ ok: true, value: 'https://a/s' });
    expect(resolveWebhookUrl(context({ type: 'WEBHOOK', url: 'https://a/u' }), 'https://c', 'webhookUrl')).toEqual({ ok: true, value: 'https://a/u' });
    expect(resolveWebhookUrl(context(), 'https://c', 'webhookUrl')).toEqual({ ok: true, value: 'https://c' });
  });

  it('refuses a profile URL that is not http(s), and says a profile is needed when there is nothing', () => {
    expect(resolveWebhookUrl(context({ type: 'WEBHOOK', secretUrl: 'file:///etc/passwd' }), undefined, 'webhookUrl')).toEqual({ ok: false, reason: 'the WEBHOOK credential profile holds no http(s) URL' });
    expect(resolveWebhookUrl(context(), undefined, 'webhookUrl')).toEqual({ ok: false, reason: 'a credential profile of type WEBHOOK is needed (or set webhookUrl)' });
  });
});
