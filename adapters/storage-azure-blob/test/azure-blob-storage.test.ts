import { Readable, Transform } from 'node:stream';
import type { ContainerClient } from '@azure/storage-blob';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError, type AdapterContext, type StorageAdapter } from '@holdfast/sdk';
import { createAdapterInstance, deterministicStream, readAll } from '@holdfast/testkit';
import definition from '../src/index.js';
import { azurite, blobNames, freshContainer, keyConfig, removeContainer, type AzuriteState } from './server.js';

const MiB = 1024 * 1024;
let state: AzuriteState;
let container: ContainerClient;
const opened: StorageAdapter[] = [];

function storage(config: Record<string, unknown>, context: Partial<AdapterContext> = {}): StorageAdapter {
  const instance = createAdapterInstance<StorageAdapter>(definition, config, context);
  opened.push(instance);
  return instance;
}

async function errorOf(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isAdapterError(error)) throw new Error(`expected an AdapterError, got ${String(error)}`);
  return { code: error.code, message: error.message };
}

const text = (value: string) => Readable.from([Buffer.from(value)]);

beforeAll(async () => {
  state = await azurite();
});
beforeEach(async () => {
  container = await freshContainer(state);
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((instance) => instance.dispose?.()));
  await removeContainer(state, container.containerName);
});

describe('storage-azure-blob credentials and bad input', () => {
  it('works with a connection string and with a credential profile, config fields winning', async () => {
    const byString = storage({ connectionString: state.connectionString, container: container.containerName });
    expect(await byString.check()).toMatchObject({ ok: true });
    await byString.put('cs/file.txt', text('by connection string'));
    const { accountName: _unused, accountKey: _alsoUnused, ...withoutKey } = keyConfig(state, container.containerName);
    const byProfile = storage(withoutKey, { credentials: { primary: { username: state.accountName, password: state.accountKey } } });
    expect((await readAll(await byProfile.get('cs/file.txt'))).toString()).toBe('by connection string');
    const configWins = storage(keyConfig(state, container.containerName), { credentials: { primary: { accountKey: 'cHJvZmlsZS13cm9uZw==' } } });
    expect((await configWins.check()).ok).toBe(true);
  });

  it('a wrong account key fails check() naming the cause, and put with AUTH, never echoing the key', async () => {
    const wrongKey = Buffer.from('Wr0ng-S3cret-Key-99').toString('base64');
    const wrong = storage({ ...keyConfig(state, container.containerName), accountKey: wrongKey });
    const health = await wrong.check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/^\[storage-azure-blob\] check of container "holdfast-[0-9a-f]+" at http:\/\/127\.0\.0\.1:10000\/devstoreaccount1 failed: access denied \((?:AuthorizationFailure|AuthenticationFailed)\): .*authenticate/);
    expect(health.message).not.toContain(wrongKey);
    const error = await errorOf(wrong.put('x.txt', text('never')));
    expect(error.code).toBe('AUTH');
    expect(error.message).not.toContain(wrongKey);
    const badString = storage({ connectionString: state.connectionString.replace(state.accountKey, wrongKey), container: container.containerName });
    const stringHealth = await badString.check();
    expect(stringHealth.ok).toBe(false);
    expect(stringHealth.message).not.toContain(wrongKey);
    expect((await blobNames(container)).all).toEqual([]);
  });

  it('an unknown host fails check() quickly, saying the name does not resolve', async () => {
    const started = Date.now();
    const health = await storage({ ...keyConfig(state, container.containerName), endpoint: 'http://no-such-host.invalid:10000/devstoreaccount1' }).check();
    expect(health.ok).toBe(false);
    expect(health.message).toContain('no-such-host.invalid');
    expect(health.message).toMatch(/does not resolve/);
    // One try, no back-off: a connection test answers in seconds.
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('a missing container fails check() naming it, and listing throws NOT_FOUND instead of an empty list', async () => {
    const missing = storage(keyConfig(state, 'holdfast-no-such-container'));
    const health = await missing.check();
    expect(health.ok).toBe(false);
    expect(health.message).toContain('container "holdfast-no-such-container"');
    expect(health.message).toContain('the container does not exist');
    const error = await errorOf((async () => {
      for await (const _entry of missing.list('')) return;
    })());
    expect(error.code).toBe('NOT_FOUND');
    expect((await errorOf(missing.put('x.txt', text('never')))).code).toBe('NOT_FOUND');
  });

  it('rejects a config without credentials, naming what is missing', async () => {
    const error = await errorOf(storage({ container: container.containerName }).put('x.txt', text('never')));
    expect(error).toMatchObject({ code: 'CONFIG', message: expect.stringContaining('no account: set "connectionString"') });
    expect(definition.configSchema.safeParse({ ...keyConfig(state, 'Bad_Name') }).success).toBe(false);
    expect(definition.configSchema.safeParse({ ...keyConfig(state, 'ok-name'), concurrency: 33 }).success).toBe(false);
  });
});

describe('storage-azure-blob uploads', () => {
  it('check() commits nothing: the container holds no blob afterwards', async () => {
    const health = await storage(keyConfig(state, container.containerName, { prefix: 'p' })).check();
    expect(health).toMatchObject({ ok: true, message: expect.stringContaining('readable and writable below "p/"') });
    expect((await blobNames(container)).committed).toEqual([]);
  });

  it('uploads in blocks of the configured size below the prefix, committed as one block list', async () => {
    const azure = storage(keyConfig(state, container.containerName, { prefix: 'backups/host1/', blockSizeMiB: 1, concurrency: 4 }));
    const bytes = 5 * MiB + 123;
    await azure.put('db/dump.gz', deterministicStream(bytes, { seed: 'blocks' }), { size: bytes });
    const blocks = await container.getBlockBlobClient('backups/host1/db/dump.gz').getBlockList('all');
    expect(blocks.committedBlocks?.map((block) => block.size)).toEqual([MiB, MiB, MiB, MiB, MiB, 123]);
    expect(blocks.uncommittedBlocks ?? []).toEqual([]);
    const stored = await readAll((await container.getBlobClient('backups/host1/db/dump.gz').download()).readableStreamBody as Readable);
    expect(stored.equals(await readAll(deterministicStream(bytes, { seed: 'blocks' })))).toBe(true);
    expect((await azure.stat('db/dump.gz')).size).toBe(bytes);
  });

  it('an upload aborted midway commits nothing and keeps the old blob; staged blocks stay uncommitted and invisible', async () => {
    const azure = storage(keyConfig(state, container.containerName, { blockSizeMiB: 1, concurrency: 2 }));
    await azure.put('keep/existing.bin', text('old'));
    const controller = new AbortController();
    let seen = 0;
    const tap = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        seen += chunk.length;
        if (seen >= 3 * MiB && !controller.signal.aborted) setImmediate(() => controller.abort());
        callback(null, chunk);
      },
    });
    const error = await errorOf(azure.put('keep/existing.bin', deterministicStream(32 * MiB).pipe(tap), { signal: controller.signal }));
    expect(error.code).toBe('ABORTED');
    const fresh = await errorOf(azure.put('new/file.bin', deterministicStream(4 * MiB, { failAfterBytes: 2 * MiB }), { signal: new AbortController().signal }));
    expect(fresh.code).toBe('TRANSIENT');
    expect((await blobNames(container)).committed).toEqual(['keep/existing.bin']);
    expect((await readAll(await azure.get('keep/existing.bin'))).toString()).toBe('old');
    expect(await azure.stat('keep/existing.bin')).toMatchObject({ size: 3 });
  });

  it('writes the configured access tier, and an archived blob gives a descriptive error on get', async () => {
    const azure = storage(keyConfig(state, container.containerName, { accessTier: 'Cool' }));
    await azure.put('tiered.bin', text('cool data'));
    expect((await container.getBlobClient('tiered.bin').getProperties()).accessTier).toBe('Cool');
    await container.getBlobClient('tiered.bin').setAccessTier('Archive');
    const error = await errorOf(azure.get('tiered.bin'));
    expect(error.code).toBe('UNSUPPORTED');
    expect(error.message).toContain('is in the Archive access tier and cannot be read. Rehydrate it first');
  });
});
