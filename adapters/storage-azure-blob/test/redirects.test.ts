import { exerciseStorage, createAdapterInstance, secretsAcrossRedirects } from '@holdfast/testkit';
import type { StorageAdapter } from '@holdfast/sdk';
import { describe, expect, it } from 'vitest';
import definition from '../src/index.js';

// Issue 41 item 6: no credential may follow a redirect from the configured endpoint (127.0.0.1) to another host
// (127.0.0.2). Shared Key requests carry "Authorization: SharedKey <account>:<signature>": finding the scheme there
// means the header went along.
const ACCOUNT_KEY = Buffer.from('redirect-probe-account-key-0123456789abcdef').toString('base64');

describe('Azure Blob: a redirect to another host carries no credential', () => {
  it('302 and 307 from the endpoint: nothing secret reaches the other host', async () => {
    const probes = await secretsAcrossRedirects([ACCOUNT_KEY, 'SharedKey'], (baseUrl) =>
      exerciseStorage(
        createAdapterInstance<StorageAdapter>(definition, {
          accountName: 'redirectprobe', accountKey: ACCOUNT_KEY, endpoint: `${baseUrl}/redirectprobe`, container: 'probe', maxTries: 1,
        }),
      ),
    );
    for (const probe of probes) {
      expect(probe.firstRequests, `${probe.status}: the adapter never called its endpoint`).toBeGreaterThan(0);
      expect(probe.leaked, `${probe.status}`).toEqual([]);
    }
  }, 120_000);
});
