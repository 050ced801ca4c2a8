import { exerciseStorage, createAdapterInstance, secretsAcrossRedirects } from '@holdfast/testkit';
import type { StorageAdapter } from '@holdfast/sdk';
import { describe, expect, it } from 'vitest';
import definition from '../src/index.js';

// Issue 41 item 6: no credential may follow a redirect from the configured server (127.0.0.1) to another host
// (127.0.0.2); Basic credentials are decoded by the probe, so the password is found there if the header went along.
const PASSWORD = 'redirect-probe-dav-password-7c1e';

describe('WebDAV: a redirect to another host carries no credential', () => {
  for (const authType of ['basic', 'digest'] as const) {
    it(`${authType} auth, 302 and 307 from the server: nothing secret reaches the other host`, async () => {
      const probes = await secretsAcrossRedirects([PASSWORD, 'Basic ', 'Digest '], (baseUrl) =>
        exerciseStorage(
          createAdapterInstance<StorageAdapter>(definition, { url: `${baseUrl}/dav`, username: 'davprobe', password: PASSWORD, authType, timeoutSeconds: 5 }),
        ),
      );
      for (const probe of probes) {
        expect(probe.firstRequests, `${probe.status}: the adapter never called its server`).toBeGreaterThan(0);
        expect(probe.leaked, `${probe.status}`).toEqual([]);
      }
    }, 120_000);
  }
});
