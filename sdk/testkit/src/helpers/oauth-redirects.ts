import assert from 'node:assert/strict';
import type { StorageAdapter } from '@holdfast/sdk';
import { createAdapterInstance } from './instantiate.js';
import { exerciseStorage, secretsAcrossRedirects, type RedirectProbe, type RedirectStatus } from './redirect-pair.js';

/** The OAuth secrets {@link assertOAuthStorageRedirectsKeepSecrets} gives the adapter and looks for on the other host. */
export const OAUTH_REDIRECT_SECRETS = {
  clientSecret: 'redirect-probe-client-secret-91',
  refreshToken: 'redirect-probe-refresh-token-52',
  accessToken: 'redirect-probe-access-token-07',
} as const;

/**
 * Issue 41 item 6 for an OAuth storage adapter: no credential may follow a redirect from the configured API
 * (127.0.0.1) to another host (127.0.0.2), neither the bearer access token of API calls nor the client secret and
 * refresh token of the token request. Per redirect status, two instances configured by `configAt(baseUrl)` run every
 * storage call ({@link exerciseStorage}): one holds a valid access token (API calls first), one has none (a refresh
 * first). Fails unless the adapter called its API and nothing secret reached the other host; answers the probes.
 */
export async function assertOAuthStorageRedirectsKeepSecrets(
  definition: unknown,
  configAt: (baseUrl: string) => Record<string, unknown>,
  statuses?: readonly RedirectStatus[],
): Promise<RedirectProbe[]> {
  const adapterAt = (baseUrl: string, withAccessToken: boolean): StorageAdapter => {
    const profile: Record<string, unknown> = {
      type: 'OAUTH',
      clientId: 'redirect-probe-client',
      clientSecret: OAUTH_REDIRECT_SECRETS.clientSecret,
      refreshToken: OAUTH_REDIRECT_SECRETS.refreshToken,
    };
    if (withAccessToken) Object.assign(profile, { accessToken: OAUTH_REDIRECT_SECRETS.accessToken, tokenExpiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    return createAdapterInstance<StorageAdapter>(definition, configAt(baseUrl), { credentials: { primary: profile }, updateCredentials: async () => undefined });
  };
  const probes = await secretsAcrossRedirects(
    Object.values(OAUTH_REDIRECT_SECRETS),
    async (baseUrl) => {
      await exerciseStorage(adapterAt(baseUrl, true));
      await exerciseStorage(adapterAt(baseUrl, false));
    },
    statuses,
  );
  for (const probe of probes) {
    assert.ok(probe.firstRequests > 0, `${probe.status}: the adapter never called its API`);
    assert.deepEqual(probe.leaked, [], `${probe.status}`);
  }
  return probes;
}
