import { Readable } from 'node:stream';
import type { ContainerClient } from '@azure/storage-blob';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { isAdapterError, type StorageAdapter } from '@holdfast/sdk';
import { createAdapterInstance, readAll } from '@holdfast/testkit';
import definition from '../src/index.js';
import { startImmutabilityFake, type ImmutabilityFake } from './immutability-fake.js';
import { azurite, blobNames, freshContainer, removeContainer, type AzuriteState } from './server.js';

// Issue 45 item 2. Azurite has no immutability (its handlers answer 501, Azure/Azurite #2648): these tests run the
// adapter against the labelled fake of test/immutability-fake.ts, which implements Microsoft's documented REST
// operations in front of Azurite. test/immutability-live.test.ts runs the same flow against real Azure (opt-in).
const FAKE = '(fake: Azurite has no immutability)';
const DAY_MS = 24 * 60 * 60 * 1000;

let state: AzuriteState;
let fake: ImmutabilityFake;
let container: ContainerClient;
const opened: StorageAdapter[] = [];

/** Azure keeps the until-date with whole seconds (RFC 1123). */
const toSecond = (date: Date) => Math.floor(date.getTime() / 1000) * 1000;
const bytes = (value: string) => Readable.from([Buffer.from(value)]);

function storage(extra: Record<string, unknown> = {}): StorageAdapter {
  const instance = createAdapterInstance<StorageAdapter>(definition, {
    accountName: state.accountName, accountKey: state.accountKey, endpoint: fake.blobEndpoint, container: container.containerName, maxTries: 1, ...extra,
  });
  opened.push(instance);
  return instance;
}

async function errorOf(promise: Promise<unknown>): Promise<{ code: string; message: string }> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  if (!isAdapterError(error)) throw new Error(`expected an AdapterError, got ${String(error)}`);
  return { code: error.code, message: error.message };
}

/** A client of the fake with the account key: "the destination's own credentials, outside Holdfast". */
async function outsideClient(): Promise<ContainerClient> {
  const { BlobServiceClient, StorageSharedKeyCredential } = await import('@azure/storage-blob');
  return new BlobServiceClient(fake.blobEndpoint, new StorageSharedKeyCredential(state.accountName, state.accountKey), { retryOptions: { maxTries: 1 } })
    .getContainerClient(container.containerName);
}

async function sleepUntil(date: Date): Promise<void> {
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, date.getTime() - Date.now() + 1_100)));
}

beforeAll(async () => {
  state = await azurite();
  fake = await startImmutabilityFake(state);
});
afterAll(async () => {
  await fake.close();
});
beforeEach(async () => {
  container = await freshContainer(state);
  fake.immutableContainers.add(container.containerName);
  fake.handled.length = 0;
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((instance) => instance.dispose?.()));
  // Tests may leave blobs under a policy in the fake; Azurite itself deletes anything.
  await removeContainer(state, container.containerName);
});

describe(`storage-azure-blob version-level immutability ${FAKE}`, () => {
  it(`a backup gets an Unlocked policy until its date (GOVERNANCE), sidecars get none; delete fails LOCKED naming the date until it passes ${FAKE}`, async () => {
    const azure = storage({ objectLockMode: 'GOVERNANCE', objectLockMarginDays: 0 });
    const retainUntil = new Date(Date.now() + 4_000);
    await azure.put('db/x.dump', bytes('backup'), { objectLock: { retainUntil } });
    await azure.put('db/x.dump.meta.json', bytes('{"v":1}'));
    const properties = await (await outsideClient()).getBlobClient('db/x.dump').getProperties();
    expect(properties.immutabilityPolicyExpiresOn?.getTime()).toBe(toSecond(retainUntil));
    expect(properties.immutabilityPolicyMode).toBe('Unlocked');
    expect(fake.blobs.get(`${container.containerName}/db/x.dump.meta.json`)).toBeUndefined();
    // The sidecar stays rewritable and deletable.
    await azure.put('db/x.dump.meta.json', bytes('{"v":2}'));
    expect((await readAll(await azure.get('db/x.dump.meta.json'))).toString()).toBe('{"v":2}');

    const refused = await errorOf(azure.delete('db/x.dump'));
    expect(refused.code).toBe('LOCKED');
    expect(refused.message).toContain(`"db/x.dump" is locked until ${new Date(toSecond(retainUntil)).toISOString()} (Azure immutability policy, Unlocked mode)`);
    // Outside Holdfast, with the account key: Azure's own 409.
    const raw = await (await outsideClient()).getBlobClient('db/x.dump').delete().catch((e: { statusCode?: number; code?: string }) => e);
    expect(raw).toMatchObject({ statusCode: 409, code: 'BlobImmutableDueToPolicy' });
    expect((await readAll(await azure.get('db/x.dump'))).toString()).toBe('backup');

    await sleepUntil(retainUntil);
    await azure.delete('db/x.dump');
    await azure.delete('db/x.dump.meta.json');
    expect((await blobNames(container)).committed).toEqual([]);
  }, 20_000);

  it(`COMPLIANCE writes a Locked policy; without a policy date it lasts objectLockDays, with one it adds the margin ${FAKE}`, async () => {
    const before = Date.now();
    await storage({ objectLockMode: 'COMPLIANCE', objectLockDays: 7 }).put('a.bin', bytes('a'), { objectLock: {} });
    const a = await (await outsideClient()).getBlobClient('a.bin').getProperties();
    expect(a.immutabilityPolicyMode).toBe('Locked');
    expect(a.immutabilityPolicyExpiresOn!.getTime()).toBeGreaterThanOrEqual(toSecond(new Date(before + 7 * DAY_MS)));
    expect(a.immutabilityPolicyExpiresOn!.getTime()).toBeLessThanOrEqual(Date.now() + 7 * DAY_MS);
    const policyEnd = new Date(Date.now() + 2 * DAY_MS);
    await storage({ objectLockMode: 'COMPLIANCE', objectLockMarginDays: 3 }).put('b.bin', bytes('b'), { objectLock: { retainUntil: policyEnd } });
    expect((await (await outsideClient()).getBlobClient('b.bin').getProperties()).immutabilityPolicyExpiresOn?.getTime()).toBe(toSecond(new Date(policyEnd.getTime() + 3 * DAY_MS)));
  });

  it(`a legal hold (SPEC locked) blocks deletion until removed; a missing blob is NOT_FOUND ${FAKE}`, async () => {
    const azure = storage({ objectLockMode: 'GOVERNANCE', objectLockMarginDays: 0 });
    const retainUntil = new Date(Date.now() + 2_000);
    await azure.put('held.bin', bytes('held'), { objectLock: { retainUntil } });
    expect(await azure.setLegalHold!('held.bin', true)).toBe(true);
    expect((await (await outsideClient()).getBlobClient('held.bin').getProperties()).legalHold).toBe(true);
    await sleepUntil(retainUntil);
    const refused = await errorOf(azure.delete('held.bin'));
    expect(refused).toMatchObject({ code: 'LOCKED', message: expect.stringContaining('"held.bin" is under a legal hold (unlock the backup to remove it)') });
    expect(refused.message).not.toContain('locked until');
    expect(await azure.setLegalHold!('held.bin', false)).toBe(true);
    await azure.delete('held.bin');
    expect((await blobNames(container)).committed).toEqual([]);
    expect((await errorOf(azure.setLegalHold!('missing.bin', true))).code).toBe('NOT_FOUND');
  }, 15_000);

  it(`a destination without objectLockMode works as before on any container: no policy, no hold, plain delete ${FAKE}`, async () => {
    const azure = storage();
    await azure.put('plain.bin', bytes('plain'), { objectLock: { retainUntil: new Date(Date.now() + DAY_MS) } });
    expect(await azure.setLegalHold!('plain.bin', true)).toBe(false);
    expect(fake.handled).toEqual([]);
    expect((await (await outsideClient()).getBlobClient('plain.bin').getProperties()).immutabilityPolicyExpiresOn).toBeUndefined();
    await azure.delete('plain.bin');
    expect((await blobNames(container)).committed).toEqual([]);
    await storage().verifyConfig!();
  });

  it(`the connection test and the save check report the container's immutability support ${FAKE}`, async () => {
    const enabled = await storage({ objectLockMode: 'GOVERNANCE' }).check();
    expect(enabled).toMatchObject({ ok: true, message: expect.stringContaining('Version-level immutability: enabled on the container') });
    await storage({ objectLockMode: 'GOVERNANCE' }).verifyConfig!();
    expect((await blobNames(container)).committed).toEqual([]);

    fake.immutableContainers.delete(container.containerName);
    const plain = await storage().check();
    expect(plain).toMatchObject({ ok: true, message: expect.stringContaining('Version-level immutability: not enabled on the container') });
    const asked = await storage({ objectLockMode: 'COMPLIANCE' }).check();
    expect(asked.ok).toBe(false);
    expect(asked.message).toContain('objectLockMode COMPLIANCE needs a container with version-level immutability support');
    const save = await errorOf(storage({ objectLockMode: 'COMPLIANCE' }).verifyConfig!());
    expect(save).toMatchObject({ code: 'CONFIG', message: expect.stringContaining(`container "${container.containerName}" does not support version-level immutability`) });
    // An unreachable container cannot be asked: the save goes through, the connection test reports it.
    await storage({ objectLockMode: 'COMPLIANCE', endpoint: 'http://127.0.0.1:1/devstoreaccount1' }).verifyConfig!();
  });

  it(`a put that cannot be made immutable stores nothing: container without support, or a date already past ${FAKE}`, async () => {
    fake.immutableContainers.delete(container.containerName);
    const refused = await errorOf(storage({ objectLockMode: 'GOVERNANCE' }).put('nope.bin', bytes('x'), { objectLock: {} }));
    expect(refused.code).toBe('CONFIG');
    expect(refused.message).toContain('put of "nope.bin" failed (nothing was stored): the immutability policy could not be set; objectLockMode is set, so the container needs');
    expect((await blobNames(container)).committed).toEqual([]);
    fake.immutableContainers.add(container.containerName);
    const past = await errorOf(storage({ objectLockMode: 'GOVERNANCE', objectLockMarginDays: 0 }).put('past.bin', bytes('x'), { objectLock: { retainUntil: new Date(Date.now() - 1000) } }));
    expect(past).toMatchObject({ code: 'CONFIG', message: expect.stringContaining('is not in the future; nothing was stored') });
    expect((await blobNames(container)).all).toEqual([]);
  });
});
