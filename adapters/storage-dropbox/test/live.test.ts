/**
 * OPT-IN suite against the real Dropbox API. It runs only when these environment variables are set (an app with
 * the scopes in the README and a refresh token of an account whose data may be written):
 *   HOLDFAST_TEST_DROPBOX_CLIENT_ID, HOLDFAST_TEST_DROPBOX_CLIENT_SECRET, HOLDFAST_TEST_DROPBOX_REFRESH_TOKEN
 *   HOLDFAST_TEST_DROPBOX_ROOT (optional, default /holdfast-live-test): each check uses a fresh folder below it.
 * Otherwise it is registered as skipped with the reason in its title, never silently absent.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { describeStorageAdapter } from '@holdfast/testkit';
import { silentLogger } from '@holdfast/sdk';
import definition, { dropboxStorageConfig } from '../src/index.js';
import { DropboxApi } from '../src/internal/api.js';

const env = {
  clientId: process.env.HOLDFAST_TEST_DROPBOX_CLIENT_ID,
  clientSecret: process.env.HOLDFAST_TEST_DROPBOX_CLIENT_SECRET,
  refreshToken: process.env.HOLDFAST_TEST_DROPBOX_REFRESH_TOKEN,
};
const base = process.env.HOLDFAST_TEST_DROPBOX_ROOT ?? '/holdfast-live-test';
const missing = Object.entries({ HOLDFAST_TEST_DROPBOX_CLIENT_ID: env.clientId, HOLDFAST_TEST_DROPBOX_CLIENT_SECRET: env.clientSecret, HOLDFAST_TEST_DROPBOX_REFRESH_TOKEN: env.refreshToken })
  .filter(([, value]) => !value)
  .map(([name]) => name);
const isEnabled = missing.length === 0;
const reason = isEnabled ? 'credentials given' : `skipped: set ${missing.join(', ')} to run against the real Dropbox API`;
if (!isEnabled) console.warn(`[storage-dropbox] real-service suite ${reason}`);
const context = { logger: silentLogger, credentials: { primary: { type: 'OAUTH', ...env } } };

describe.skipIf(!isEnabled)(`storage-dropbox against the REAL Dropbox API (opt-in; ${reason})`, () => {
  describeStorageAdapter<Record<string, unknown>>('storage-dropbox live', {
    definition,
    config: () => ({ root: `${base}/${randomBytes(6).toString('hex')}`, chunkSizeMiB: 8 }),
    badConfig: { root: base, apiBaseUrl: 'http://127.0.0.1:1', contentBaseUrl: 'http://127.0.0.1:1' },
    context,
    cleanup: async (config) => {
      const api = new DropboxApi(dropboxStorageConfig.parse(config), context);
      await api.rpc('files/delete_v2', { path: config.root }).catch(() => undefined);
    },
  });

  it('refreshes the token and reports it for write-back', async () => {
    const updates: Record<string, unknown>[] = [];
    const api = new DropboxApi(dropboxStorageConfig.parse({ root: base }), { ...context, updateCredentials: async (_role, patch) => void updates.push(patch) });
    await api.rpc('files/list_folder', { path: '', limit: 1 });
    expect(updates).toHaveLength(1);
    expect(typeof updates[0]!.accessToken).toBe('string');
  });
});
