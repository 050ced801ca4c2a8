/**
 * OPT-IN suite against the real Microsoft Graph / OneDrive. It runs only when these environment variables are set (an
 * app registration with the delegated permissions in the README and a refresh token of an account whose OneDrive may
 * be written):
 *   HOLDFAST_TEST_ONEDRIVE_CLIENT_ID, HOLDFAST_TEST_ONEDRIVE_CLIENT_SECRET, HOLDFAST_TEST_ONEDRIVE_REFRESH_TOKEN
 *   HOLDFAST_TEST_ONEDRIVE_TENANT (optional, default common), HOLDFAST_TEST_ONEDRIVE_FOLDER (optional, default
 *   holdfast-live-test): each check uses a fresh folder below it.
 * Microsoft rotates refresh tokens: the suite keeps the newest in memory for the run (print nothing of it).
 * Otherwise it is registered as skipped with the reason in its title, never silently absent.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { describeStorageAdapter } from '@holdfast/testkit';
import { silentLogger } from '@holdfast/sdk';
import definition, { onedriveStorageConfig } from '../src/index.js';
import { GraphApi, itemPath } from '../src/internal/api.js';
import { storedProfile } from './support.js';

const env = {
  clientId: process.env.HOLDFAST_TEST_ONEDRIVE_CLIENT_ID,
  clientSecret: process.env.HOLDFAST_TEST_ONEDRIVE_CLIENT_SECRET,
  refreshToken: process.env.HOLDFAST_TEST_ONEDRIVE_REFRESH_TOKEN,
};
const tenant = process.env.HOLDFAST_TEST_ONEDRIVE_TENANT ?? 'common';
const base = process.env.HOLDFAST_TEST_ONEDRIVE_FOLDER ?? 'holdfast-live-test';
const missing = Object.entries({ HOLDFAST_TEST_ONEDRIVE_CLIENT_ID: env.clientId, HOLDFAST_TEST_ONEDRIVE_CLIENT_SECRET: env.clientSecret, HOLDFAST_TEST_ONEDRIVE_REFRESH_TOKEN: env.refreshToken })
  .filter(([, value]) => !value)
  .map(([name]) => name);
const isEnabled = missing.length === 0;
const reason = isEnabled ? 'credentials given' : `skipped: set ${missing.join(', ')} to run against the real Microsoft Graph`;
if (!isEnabled) console.warn(`[storage-onedrive] real-service suite ${reason}`);
const stored = storedProfile({ type: 'OAUTH', ...env });
const context = { logger: silentLogger, ...stored.context };

describe.skipIf(!isEnabled)(`storage-onedrive against the REAL Microsoft Graph / OneDrive (opt-in; ${reason})`, () => {
  describeStorageAdapter<Record<string, unknown>>('storage-onedrive live', {
    definition,
    config: () => ({ folderPath: `${base}/${randomBytes(6).toString('hex')}`, tenant }),
    badConfig: { folderPath: base, tenant, apiBaseUrl: 'http://127.0.0.1:1/v1.0' },
    context,
    cleanup: async (config) => {
      const parsed = onedriveStorageConfig.parse(config);
      await new GraphApi(parsed, context).json('DELETE', itemPath(parsed.folderPath.split('/'))).catch(() => undefined);
    },
  });

  it('refreshes the token and reports it for write-back', async () => {
    const before = stored.updates.length;
    const api = new GraphApi(onedriveStorageConfig.parse({ tenant }), { ...context, credentials: { primary: { ...stored.profile, accessToken: undefined, tokenExpiresAt: undefined } } });
    await api.json('GET', '');
    expect(stored.updates.length).toBe(before + 1);
    expect(typeof stored.updates.at(-1)!.accessToken).toBe('string');
  });
});
