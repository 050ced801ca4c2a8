// SPEC "Authentication" 8: the three cloud-drive token validation endpoints require `credentials:read`. They check
// an OAUTH profile through the installed cloud-drive adapter against the vendor's own endpoints. No vendor is
// reachable from this machine, so a check here must fail cleanly with a message naming the cause and never the
// tokens; the permission, type and 404 rules are checked as for every route.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

const PROVIDERS = ['google-drive', 'dropbox', 'onedrive'];
const SECRETS = { clientSecret: 'oauth-client-secret-5f1e', refreshToken: 'oauth-refresh-token-77aa' };

describe('cloud-drive token validation endpoints', () => {
  let server: FullServer;
  let admin: Caller;
  let oauthId: string;
  let tokenId: string;

  beforeAll(async () => {
    server = await startFullServer('sqlite');
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    const oauth = await server.call('POST', '/api/credentials', admin, { name: 'drive app', type: 'OAUTH', data: { clientId: 'client-1', ...SECRETS } });
    expect(oauth.status, JSON.stringify(oauth.body)).toBe(201);
    oauthId = oauth.body.id;
    const token = await server.call('POST', '/api/credentials', admin, { name: 'a token', type: 'TOKEN', data: { token: 'tok-123456' } });
    tokenId = token.body.id;
  }, 60_000);
  afterAll(() => server?.close());

  it.each(PROVIDERS)('%s: an unreachable vendor gives success false naming the cause, never a token', async (provider) => {
    const answer = await server.call('POST', `/api/credentials/${oauthId}/validate/${provider}`, admin);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(answer.body.success).toBe(false);
    expect(answer.body.message).not.toMatch(/requires a credential profile/);
    expect(answer.body.message).toMatch(/ENOTFOUND|EAI_AGAIN|reach|network|fetch failed|connect/i);
    for (const secret of Object.values(SECRETS)) expect(JSON.stringify(answer.body)).not.toContain(secret);
  });

  it('refuses a profile that is not OAUTH (400) and an unknown one (404)', async () => {
    const wrongType = await server.call('POST', `/api/credentials/${tokenId}/validate/dropbox`, admin);
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error).toMatch(/OAUTH/);
    expect((await server.call('POST', '/api/credentials/00000000-0000-4000-8000-000000000000/validate/onedrive', admin)).status).toBe(404);
  });

  it('requires credentials:read: 401 anonymous, 403 for a key without it, 200 for a key with it', async () => {
    const without = await server.call('POST', '/api/api-keys', admin, { name: 'no creds', permissions: ['jobs:read'] });
    const withRead = await server.call('POST', '/api/api-keys', admin, { name: 'creds reader', permissions: ['credentials:read'] });
    const keyOf = (answer: { body: { key?: string; rawKey?: string } }) => ({ bearer: answer.body.key ?? answer.body.rawKey });
    for (const provider of PROVIDERS) {
      const path = `/api/credentials/${oauthId}/validate/${provider}`;
      expect((await server.call('POST', path)).status).toBe(401);
      expect((await server.call('POST', path, keyOf(without))).status).toBe(403);
      expect((await server.call('POST', path, keyOf(withRead))).status).toBe(200);
    }
  });
});
