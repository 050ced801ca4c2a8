import { assertOAuthStorageRedirectsKeepSecrets } from '@holdfast/testkit';
import { describe, it } from 'vitest';
import definition from '../src/index.js';

// Issue 41 item 6: no credential may follow a redirect from the configured API (127.0.0.1) to another host
// (127.0.0.2): neither the bearer access token of API calls nor the client secret and refresh token of the token
// request. One instance holds a valid access token (API calls first), one has none (a refresh first).
describe('OneDrive: a redirect to another host carries no credential', () => {
  it('302 and 307 from the API and the token endpoint: nothing secret reaches the other host', async () => {
    await assertOAuthStorageRedirectsKeepSecrets(definition, (baseUrl) => ({ folderPath: 'Probe', apiBaseUrl: baseUrl, authBaseUrl: baseUrl, requestTimeoutSeconds: 5 }));
  }, 120_000);
});
