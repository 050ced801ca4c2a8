/**
 * OPT-IN suite against the real Google Drive API. It runs only when these environment variables are set (an app with
 * the scopes in the README and a refresh token of an account whose data may be written):
 *   HOLDFAST_TEST_GDRIVE_CLIENT_ID, HOLDFAST_TEST_GDRIVE_CLIENT_SECRET, HOLDFAST_TEST_GDRIVE_REFRESH_TOKEN
 *   HOLDFAST_TEST_GDRIVE_FOLDER (optional, default holdfast-live-test, in My Drive): each check uses a fresh folder below it.
 * Otherwise it is registered as skipped with the reason in its title, never silently absent.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { describeStorageAdapter } from '@holdfast/testkit';
import { silentLogger } from '@holdfast/sdk';
import definition, { gdriveStorageConfig } from '../src/index.js';
import { DriveApi } from '../src/internal/api.js';
import { resolveFolder } from '../src/internal/files.js';

const env = {
  clientId: process.env.HOLDFAST_TEST_GDRIVE_CLIENT_ID,
  clientSecret: process.env.HOLDFAST_TEST_GDRIVE_CLIENT_SECRET,
  refreshToken: process.env.HOLDFAST_TEST_GDRIVE_REFRESH_TOKEN,
};
const base = process.env.HOLDFAST_TEST_GDRIVE_FOLDER ?? 'holdfast-live-test';
const missing = Object.entries({ HOLDFAST_TEST_GDRIVE_CLIENT_ID: env.clientId, HOLDFAST_TEST_GDRIVE_CLIENT_SECRET: env.clientSecret, HOLDFAST_TEST_GDRIVE_REFRESH_TOKEN: env.refreshToken })
  .filter(([, value]) => !value)
  .map(([name]) => name);
const isEnabled = missing.length === 0;
const reason = isEnabled ? 'credentials given' : `skipped: set ${missing.join(', ')} to run against the real Google Drive API`;
if (!isEnabled) console.warn(`[storage-gdrive] real-service suite ${reason}`);
const context = { logger: silentLogger, credentials: { primary: { type: 'OAUTH', ...env } } };

describe.skipIf(!isEnabled)(`storage-gdrive against the REAL Google Drive API (opt-in; ${reason})`, () => {
  describeStorageAdapter<Record<string, unknown>>('storage-gdrive live', {
    definition,
    config: () => ({ folderPath: `${base}/${randomBytes(6).toString('hex')}`, chunkSizeMiB: 8 }),
    badConfig: { folderPath: base, apiBaseUrl: 'http://127.0.0.1:1', tokenUrl: 'http://127.0.0.1:1/token' },
    context,
    cleanup: async (config) => {
      const api = new DriveApi(gdriveStorageConfig.parse(config), context);
      const parsed = gdriveStorageConfig.parse(config);
      const folderId = await resolveFolder(api, parsed.parentFolderId, parsed.folderPath, false).catch(() => undefined);
      if (folderId) await api.json('DELETE', `files/${folderId}`).catch(() => undefined);
    },
  });

  it('refreshes the token and reports it for write-back', async () => {
    const updates: Record<string, unknown>[] = [];
    const api = new DriveApi(gdriveStorageConfig.parse({}), { ...context, updateCredentials: async (_role, patch) => void updates.push(patch) });
    await api.json('GET', 'files', { pageSize: '1', q: 'trashed = false' });
    expect(updates).toHaveLength(1);
    expect(typeof updates[0]!.accessToken).toBe('string');
  });
});
