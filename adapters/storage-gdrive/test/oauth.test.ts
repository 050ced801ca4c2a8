import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createAdapterInstance } from '@holdfast/testkit';
import { isAdapterError, silentLogger, type AdapterContext, type StorageAdapter } from '@holdfast/sdk';
import definition from '../src/index.js';
import { useFakeDrive } from './support.js';

const drive = useFakeDrive();
const MESSAGE = 'a credential profile of type OAUTH must be assigned';

function storageWith(config: Record<string, unknown>, context: Partial<AdapterContext>): StorageAdapter {
  return createAdapterInstance(definition, config, { logger: silentLogger, ...context }) as StorageAdapter;
}

async function caught(promise: Promise<unknown>): Promise<Error & { code?: string }> {
  try {
    const value = await promise;
    (value as Readable | undefined)?.destroy?.();
  } catch (error) {
    return error as Error & { code?: string };
  }
  throw new Error('expected a rejection');
}

async function drain(iterable: AsyncIterable<unknown>): Promise<unknown[]> {
  const all: unknown[] = [];
  for await (const item of iterable) all.push(item);
  return all;
}

describe('storage-gdrive OAuth against a local fake of the Google Drive API', () => {
  it('refreshes after a 401 authError for an expired token, retries, and writes the new token back', async () => {
    const fake = await drive.ready();
    const stale = fake.expiredToken();
    const updates: Array<[string, Record<string, unknown>]> = [];
    // tokenExpiresAt in the future: the adapter trusts the stale token until the API answers 401.
    const profile = drive.profile({ accessToken: stale, tokenExpiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    const storage = storageWith(await drive.config(), {
      credentials: { primary: profile },
      updateCredentials: async (role, patch) => void updates.push([role, patch]),
    });
    const [grants, rejected] = [fake.tokenGrants, fake.rejectedCalls];
    await storage.put('refresh/file.txt', Readable.from([Buffer.from('after refresh')]));
    expect(fake.rejectedCalls - rejected).toBe(1);
    expect(fake.tokenGrants - grants).toBe(1);
    expect(updates).toHaveLength(1);
    const [role, patch] = updates[0]!;
    expect(role).toBe('primary');
    expect(typeof patch.accessToken).toBe('string');
    expect(patch.accessToken).not.toBe(stale);
    expect(fake.tokens.get(patch.accessToken as string)).toBeGreaterThan(Date.now());
    expect(Date.parse(String(patch.tokenExpiresAt))).toBeGreaterThan(Date.now() + 3_000_000);
    expect(patch.refreshToken).toBeUndefined();
    // The renewed token is reused: no further grants.
    expect((await storage.stat('refresh/file.txt')).size).toBe(13);
    expect(fake.tokenGrants - grants).toBe(1);
  });

  it('refreshes before the first call when the profile has no access token, once for concurrent calls', async () => {
    const fake = await drive.ready();
    const updates: Record<string, unknown>[] = [];
    const storage = storageWith(await drive.config(), {
      credentials: { primary: drive.profile() },
      updateCredentials: async (_role, patch) => void updates.push(patch),
    });
    const [grants, rejected] = [fake.tokenGrants, fake.rejectedCalls];
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => caught(storage.stat(`none-${i}.bin`))));
    expect(results.map((error) => error.code)).toEqual(Array(5).fill('NOT_FOUND'));
    expect(fake.tokenGrants - grants).toBe(1);
    expect(fake.rejectedCalls - rejected).toBe(0);
    expect(updates).toHaveLength(1);
  });

  it('still works when storing the refreshed token fails (logged, not fatal)', async () => {
    const storage = storageWith(await drive.config(), {
      credentials: { primary: drive.profile() },
      updateCredentials: async () => {
        throw new Error('database is read-only');
      },
    });
    await storage.put('x.txt', Readable.from([Buffer.from('x')]));
    expect((await storage.stat('x.txt')).size).toBe(1);
  });

  it('without a credential profile: check fails and every operation throws CONFIG naming the missing OAUTH profile', async () => {
    const storage = storageWith(await drive.config(), {});
    const health = await storage.check();
    expect(health.ok).toBe(false);
    expect(health.message).toContain(MESSAGE);
    const calls = [
      storage.put('a.bin', Readable.from([Buffer.from('a')])),
      storage.get('a.bin'),
      storage.stat('a.bin'),
      storage.delete('a.bin'),
      drain(storage.list('')),
    ];
    for (const error of await Promise.all(calls.map(caught))) {
      expect(isAdapterError(error)).toBe(true);
      expect(error.code).toBe('CONFIG');
      expect(error.message).toContain(MESSAGE);
      expect(error.message).toContain('[storage-gdrive]');
    }
  });

  it('with a profile of another type: CONFIG saying OAUTH is needed', async () => {
    const storage = storageWith(await drive.config(), { credentials: { primary: { type: 'USERNAME_PASSWORD', username: 'u', password: 'hunter2-password' } } });
    const error = await caught(storage.stat('a.bin'));
    expect(error.code).toBe('CONFIG');
    expect(error.message).toContain('USERNAME_PASSWORD');
    expect(error.message).toContain(MESSAGE);
    expect(error.message).not.toContain('hunter2-password');
  });

  it('a wrong refresh token fails check and operations with AUTH naming invalid_grant, without the token', async () => {
    const badToken = 'wrong-refresh-token-0123456789';
    const storage = storageWith(await drive.config(), { credentials: { primary: drive.profile({ refreshToken: badToken }) } });
    const health = await storage.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/rejected the refresh token \(invalid_grant/);
    const error = await caught(drain(storage.list('')));
    expect(error.code).toBe('AUTH');
    expect(error.message).toContain('invalid_grant');
    for (const text of [health.message, error.message]) {
      expect(text).not.toContain(badToken);
      expect(text).not.toContain(drive.fake.clientSecret);
    }
  });

  it('a wrong client secret fails with AUTH naming the app credentials, without the secret', async () => {
    const storage = storageWith(await drive.config(), { credentials: { primary: drive.profile({ clientSecret: 'not-the-secret-42' }) } });
    const error = await caught(storage.stat('a.bin'));
    expect(error.code).toBe('AUTH');
    expect(error.message).toMatch(/invalid_client.*clientId and clientSecret/);
    expect(error.message).not.toContain('not-the-secret-42');
  });

  it('a revoked access token without a refresh token makes list throw AUTH, never an empty list', async () => {
    const storage = storageWith(await drive.config(), { credentials: { primary: { type: 'OAUTH', clientId: 'c', clientSecret: 's', accessToken: 'ya29.revoked-token' } } });
    const error = await caught(drain(storage.list('')));
    expect(error.code).toBe('AUTH');
    expect(error.message).toContain('authError');
    expect(error.message).not.toContain('ya29.revoked-token');
  });
});
