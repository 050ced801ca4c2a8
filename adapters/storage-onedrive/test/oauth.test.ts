import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createAdapterInstance } from '@holdfast/testkit';
import { isAdapterError, silentLogger, type AdapterContext, type StorageAdapter } from '@holdfast/sdk';
import definition from '../src/index.js';
import { storedProfile, useFakeGraph } from './support.js';

const graph = useFakeGraph();
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

describe('storage-onedrive OAuth against a local fake of the Microsoft Graph drive API', () => {
  it('refreshes after a 401 for an expired token and writes back the new access token and the ROTATED refresh token', async () => {
    const fake = await graph.ready();
    const stale = fake.expiredToken();
    const oldRefresh = fake.refreshToken;
    const stored = storedProfile(graph.profile({ accessToken: stale, tokenExpiresAt: new Date(Date.now() + 3_600_000).toISOString() }));
    const config = await graph.config();
    const [grants, rejected] = [fake.tokenGrants, fake.rejectedCalls];
    await storageWith(config, stored.context).put('refresh/file.txt', Readable.from([Buffer.from('after refresh')]));
    expect(fake.rejectedCalls - rejected).toBe(1);
    expect(fake.tokenGrants - grants).toBe(1);
    expect(stored.updates).toHaveLength(1);
    const patch = stored.updates[0]!;
    expect(patch.accessToken).not.toBe(stale);
    expect(fake.tokens.get(patch.accessToken as string)).toBeGreaterThan(Date.now());
    expect(patch.refreshToken).toBe(fake.refreshToken);
    expect(patch.refreshToken).not.toBe(oldRefresh);
    // A later instance reads the written-back profile; without the write-back it would hold the revoked token.
    const later = storageWith(config, { credentials: { primary: { ...stored.profile, accessToken: undefined, tokenExpiresAt: undefined } } });
    expect((await later.stat('refresh/file.txt')).size).toBe(13);
    // The old refresh token is revoked by the rotation: using it fails with AUTH naming invalid_grant.
    const error = await caught(storageWith(config, { credentials: { primary: graph.profile({ refreshToken: oldRefresh }) } }).stat('refresh/file.txt'));
    expect(error.code).toBe('AUTH');
    expect(error.message).toContain('invalid_grant');
  });

  it('asks for the profile\'s scope, or offline_access Files.ReadWrite when it names none', async () => {
    const fake = await graph.ready();
    const config = await graph.config();
    await caught(storageWith(config, storedProfile(graph.profile()).context).stat('x'));
    expect(fake.scopes.at(-1)).toBe('offline_access Files.ReadWrite');
    await caught(storageWith(config, storedProfile(graph.profile({ scope: 'offline_access Files.ReadWrite.AppFolder' })).context).stat('x'));
    expect(fake.scopes.at(-1)).toBe('offline_access Files.ReadWrite.AppFolder');
  });

  it('refreshes once for concurrent calls', async () => {
    const fake = await graph.ready();
    const stored = storedProfile(graph.profile());
    const storage = storageWith(await graph.config(), stored.context);
    const grants = fake.tokenGrants;
    const results = await Promise.all(Array.from({ length: 5 }, (_, i) => caught(storage.stat(`none-${i}.bin`))));
    expect(results.map((error) => error.code)).toEqual(Array(5).fill('NOT_FOUND'));
    expect(fake.tokenGrants - grants).toBe(1);
    expect(stored.updates).toHaveLength(1);
  });

  it('without a credential profile: check fails and every operation throws CONFIG naming the missing OAUTH profile', async () => {
    const storage = storageWith(await graph.config(), {});
    const health = await storage.check();
    expect(health.ok).toBe(false);
    expect(health.message).toContain(MESSAGE);
    const calls = [storage.put('a.bin', Readable.from([Buffer.from('a')])), storage.get('a.bin'), storage.stat('a.bin'), storage.delete('a.bin'), drain(storage.list(''))];
    for (const error of await Promise.all(calls.map(caught))) {
      expect(isAdapterError(error)).toBe(true);
      expect(error.code).toBe('CONFIG');
      expect(error.message).toContain(MESSAGE);
      expect(error.message).toContain('[storage-onedrive]');
    }
  });

  it('with a profile of another type: CONFIG saying OAUTH is needed', async () => {
    const storage = storageWith(await graph.config(), { credentials: { primary: { type: 'TOKEN', token: 'hunter2-token-value' } } });
    const error = await caught(storage.stat('a.bin'));
    expect(error.code).toBe('CONFIG');
    expect(error.message).toContain(MESSAGE);
    expect(error.message).not.toContain('hunter2-token-value');
  });

  it('a wrong refresh token fails check and operations with AUTH naming invalid_grant, without the token', async () => {
    const badToken = 'wrong-refresh-token-0123456789';
    const storage = storageWith(await graph.config(), { credentials: { primary: graph.profile({ refreshToken: badToken }) } });
    const health = await storage.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/rejected the refresh token \(invalid_grant/);
    const error = await caught(drain(storage.list('')));
    expect(error.code).toBe('AUTH');
    for (const text of [health.message, error.message]) {
      expect(text).not.toContain(badToken);
      expect(text).not.toContain(graph.fake.clientSecret);
    }
  });

  it('a wrong client secret fails with AUTH naming the app credentials, without the secret', async () => {
    const storage = storageWith(await graph.config(), { credentials: { primary: graph.profile({ clientSecret: 'not-the-secret-42' }) } });
    const error = await caught(storage.stat('a.bin'));
    expect(error.code).toBe('AUTH');
    expect(error.message).toMatch(/invalid_client.*clientId and clientSecret/);
    expect(error.message).not.toContain('not-the-secret-42');
  });

  it('a revoked access token without a refresh token makes list throw AUTH, never an empty list', async () => {
    const storage = storageWith(await graph.config(), { credentials: { primary: { type: 'OAUTH', clientId: 'c', clientSecret: 's', accessToken: 'eyJ.revoked' } } });
    const error = await caught(drain(storage.list('')));
    expect(error.code).toBe('AUTH');
    expect(error.message).toContain('InvalidAuthenticationToken');
    expect(error.message).not.toContain('eyJ.revoked');
  });
});
