import { exerciseStorage, createAdapterInstance, secretsAcrossRedirects } from '@holdfast/testkit';
import type { StorageAdapter } from '@holdfast/sdk';
import { describe, expect, it } from 'vitest';
import definition from '../src/index.js';

// Issue 41 item 6: no credential may follow a redirect from the configured endpoint (127.0.0.1) to another host
// (127.0.0.2). The access key id travels in the Authorization header, so finding it there means the header went along.
const ACCESS_KEY_ID = 'AKIAREDIRECTPROBE0001';
const SECRET_ACCESS_KEY = 'redirect-probe-secret-access-key-0123456789';
const SESSION_TOKEN = 'redirect-probe-session-token-4f2a';

describe('S3: a redirect to another host carries no credential', () => {
  it('302 and 307 from the endpoint: nothing secret reaches the other host', async () => {
    const probes = await secretsAcrossRedirects([ACCESS_KEY_ID, SECRET_ACCESS_KEY, SESSION_TOKEN], (baseUrl) =>
      exerciseStorage(
        createAdapterInstance<StorageAdapter>(definition, {
          preset: 'custom', endpoint: baseUrl, region: 'us-east-1', forcePathStyle: true, bucket: 'redirect-probe',
          accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET_ACCESS_KEY, sessionToken: SESSION_TOKEN,
        }),
      ),
    );
    for (const probe of probes) {
      expect(probe.firstRequests, `${probe.status}: the adapter never called its endpoint`).toBeGreaterThan(0);
      expect(probe.leaked, `${probe.status}`).toEqual([]);
    }
  }, 120_000);
});
