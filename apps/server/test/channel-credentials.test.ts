// SPEC "Adapter configuration" and issue 14: token and webhook notification channels require an assigned credential
// profile (WEBHOOK for the chat webhooks, TOKEN for the push, bot and SMS services). On the assembled server, with the
// real channel packages: without a profile (or with one of the wrong type) saving is refused with 400 and the
// connection test fails, each naming the profile type and never echoing a secret; with one, the channel is saved and
// its connection test reaches the channel itself (whose vendor is unreachable here), and the profile cannot be deleted
// while the channel uses it, so no saved channel is ever left without one.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

const SECRET = 'do-not-echo-7c1f0a';

/** Each channel with a config valid by its schema (secrets inline), and the profile type it requires. */
const CHANNELS: Array<{ adapterId: string; profile: 'WEBHOOK' | 'TOKEN'; config: Record<string, unknown> }> = [
  { adapterId: 'discord', profile: 'WEBHOOK', config: { webhookUrl: `https://discord.invalid/api/webhooks/1/${SECRET}` } },
  { adapterId: 'slack', profile: 'WEBHOOK', config: { webhookUrl: `https://hooks.invalid/services/${SECRET}` } },
  { adapterId: 'teams', profile: 'WEBHOOK', config: { webhookUrl: `https://teams.invalid/workflows/${SECRET}` } },
  { adapterId: 'gotify', profile: 'TOKEN', config: { serverUrl: 'https://gotify.invalid', appToken: SECRET } },
  { adapterId: 'telegram', profile: 'TOKEN', config: { botToken: `123456:${SECRET}`, chatId: '42' } },
  { adapterId: 'pushover', profile: 'TOKEN', config: { appToken: SECRET, userKey: 'u'.repeat(30) } },
  { adapterId: 'sms', profile: 'TOKEN', config: { accountSid: 'AC0001', authToken: SECRET, from: '+15550001111', to: '+15550002222' } },
];

describe('token and webhook channels require a credential profile (assembled server, real channel packages)', () => {
  let server: FullServer;
  let admin: Caller;
  const profiles: Record<'WEBHOOK' | 'TOKEN', string> = { WEBHOOK: '', TOKEN: '' };

  beforeAll(async () => {
    server = await startFullServer('sqlite');
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    const webhook = await server.call('POST', '/api/credentials', admin, { name: 'hook profile', type: 'WEBHOOK', data: { secretUrl: `https://hooks.invalid/${SECRET}` } });
    expect(webhook.status, JSON.stringify(webhook.body)).toBe(201);
    profiles.WEBHOOK = webhook.body.id;
    const token = await server.call('POST', '/api/credentials', admin, { name: 'token profile', type: 'TOKEN', data: { token: `tok-${SECRET}` } });
    expect(token.status, JSON.stringify(token.body)).toBe(201);
    profiles.TOKEN = token.body.id;
  }, 60_000);
  afterAll(() => server?.close());

  it.each(CHANNELS)('$adapterId: no profile or the wrong type is refused (400, test fails) naming $profile; with one it saves and the profile stays', async ({ adapterId, profile, config }) => {
    const base = { name: `${adapterId} channel`, type: 'notification', adapterId, config };
    const withoutProfile = await server.call('POST', '/api/adapters', admin, base);
    expect(withoutProfile.status, JSON.stringify(withoutProfile.body)).toBe(400);
    expect(withoutProfile.body.error).toContain(`requires a credential profile of type ${profile}`);
    expect(JSON.stringify(withoutProfile.body)).not.toContain(SECRET);

    const wrong = profile === 'WEBHOOK' ? 'TOKEN' : 'WEBHOOK';
    const wrongType = await server.call('POST', '/api/adapters', admin, { ...base, primaryCredentialId: profiles[wrong] });
    expect(wrongType.status, JSON.stringify(wrongType.body)).toBe(400);
    expect(wrongType.body.error).toContain(`requires a credential profile of type ${profile}`);

    const untested = await server.call('POST', '/api/adapters/test-connection', admin, { type: 'notification', adapterId, config });
    expect(untested.status, JSON.stringify(untested.body)).toBe(200);
    expect(untested.body).toMatchObject({ success: false });
    expect(untested.body.message).toContain(`requires a credential profile of type ${profile}`);
    expect(JSON.stringify(untested.body)).not.toContain(SECRET);

    const saved = await server.call('POST', '/api/adapters', admin, { ...base, primaryCredentialId: profiles[profile] });
    expect(saved.status, JSON.stringify(saved.body)).toBe(201);
    // With the profile the rule is met, so the test reaches the channel, whose vendor host does not resolve here.
    const tested = await server.call('POST', '/api/adapters/test-connection', admin, { id: saved.body.id });
    expect(tested.body.success).toBe(false);
    expect(tested.body.message).not.toContain('requires a credential profile');
    expect(JSON.stringify(tested.body)).not.toContain(SECRET);

    const deleteProfile = await server.call('DELETE', `/api/credentials/${profiles[profile]}`, admin);
    expect(deleteProfile.status, JSON.stringify(deleteProfile.body)).toBe(409);
    const removed = await server.call('DELETE', `/api/adapters/${saved.body.id}`, admin);
    expect(removed.status, JSON.stringify(removed.body)).toBe(200);
  }, 60_000);
});
