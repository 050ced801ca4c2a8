/**
 * OPT-IN suite against the REAL Azure Blob service (Azurite has no immutability, Azure/Azurite #2648). It runs only
 * when these environment variables are set:
 *   HOLDFAST_TEST_AZURE_CONNECTION_STRING  connection string of a storage account with blob versioning enabled
 *   HOLDFAST_TEST_AZURE_IMMUTABLE_CONTAINER  a container with version-level immutability support and NO default policy
 * Each check writes below a fresh random prefix, with Unlocked (GOVERNANCE) policies of a few seconds only, and
 * removes what it wrote, previous versions included, once the policies have expired. Otherwise the suite is
 * registered as skipped with the reason in its title, never silently absent.
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { isAdapterError, type StorageAdapter } from '@holdfast/sdk';
import { createAdapterInstance } from '@holdfast/testkit';
import definition from '../src/index.js';

const env = {
  HOLDFAST_TEST_AZURE_CONNECTION_STRING: process.env.HOLDFAST_TEST_AZURE_CONNECTION_STRING,
  HOLDFAST_TEST_AZURE_IMMUTABLE_CONTAINER: process.env.HOLDFAST_TEST_AZURE_IMMUTABLE_CONTAINER,
};
const missing = Object.entries(env).filter(([, value]) => !value).map(([name]) => name);
const isEnabled = missing.length === 0;
const reason = isEnabled ? 'credentials given' : `skipped: set ${missing.join(', ')} to run against the real Azure Blob service`;
if (!isEnabled) console.warn(`[storage-azure-blob] real-service immutability suite ${reason}`);

const prefix = `holdfast-live-${randomBytes(6).toString('hex')}`;
const bytes = (value: string) => Readable.from([Buffer.from(value)]);

function storage(extra: Record<string, unknown> = {}): StorageAdapter {
  return createAdapterInstance<StorageAdapter>(definition, {
    connectionString: env.HOLDFAST_TEST_AZURE_CONNECTION_STRING, container: env.HOLDFAST_TEST_AZURE_IMMUTABLE_CONTAINER, prefix, ...extra,
  });
}

async function rawContainer() {
  const { BlobServiceClient } = await import('@azure/storage-blob');
  return BlobServiceClient.fromConnectionString(env.HOLDFAST_TEST_AZURE_CONNECTION_STRING!).getContainerClient(env.HOLDFAST_TEST_AZURE_IMMUTABLE_CONTAINER!);
}

describe.skipIf(!isEnabled)(`storage-azure-blob immutability against the REAL Azure Blob service (opt-in; ${reason})`, () => {
  afterAll(async () => {
    // Every version below the prefix (a delete leaves the current version behind as a previous version).
    const container = await rawContainer();
    for await (const item of container.listBlobsFlat({ prefix, includeVersions: true })) {
      const blob = container.getBlobClient(item.name);
      await (item.versionId ? blob.withVersion(item.versionId) : blob).setLegalHold(false).catch(() => undefined);
      await (item.versionId ? blob.withVersion(item.versionId) : blob).delete().catch(() => undefined);
    }
  }, 60_000);

  it('the connection test and the save check see version-level immutability on the container', async () => {
    const health = await storage({ objectLockMode: 'GOVERNANCE' }).check();
    expect(health).toMatchObject({ ok: true, message: expect.stringContaining('Version-level immutability: enabled on the container') });
    await storage({ objectLockMode: 'GOVERNANCE' }).verifyConfig!();
  });

  it('a backup is immutable until its date and under a legal hold; the sidecar is not; Azure refuses the raw delete', async () => {
    const azure = storage({ objectLockMode: 'GOVERNANCE', objectLockMarginDays: 0 });
    const retainUntil = new Date(Date.now() + 15_000);
    await azure.put('db/x.dump', bytes('backup'), { objectLock: { retainUntil } });
    await azure.put('db/x.dump.meta.json', bytes('{}'));
    const container = await rawContainer();
    const properties = await container.getBlobClient(`${prefix}/db/x.dump`).getProperties();
    expect(properties.immutabilityPolicyMode).toBe('Unlocked');
    expect(properties.immutabilityPolicyExpiresOn?.getTime()).toBe(Math.floor(retainUntil.getTime() / 1000) * 1000);
    expect((await container.getBlobClient(`${prefix}/db/x.dump.meta.json`).getProperties()).immutabilityPolicyExpiresOn).toBeUndefined();

    const refused = await azure.delete('db/x.dump').then(() => undefined, (error: unknown) => error);
    expect(isAdapterError(refused) && refused.code).toBe('LOCKED');
    expect((refused as Error).message).toContain('"db/x.dump" is locked until');
    const raw = await container.getBlobClient(`${prefix}/db/x.dump`).delete().catch((error: { statusCode?: number; code?: string }) => error);
    expect(raw).toMatchObject({ statusCode: 409, code: 'BlobImmutableDueToPolicy' });

    expect(await azure.setLegalHold!('db/x.dump', true)).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, retainUntil.getTime() - Date.now() + 2_000)));
    const held = await azure.delete('db/x.dump').then(() => undefined, (error: unknown) => error);
    expect((held as Error).message).toContain('under a legal hold');
    expect(await azure.setLegalHold!('db/x.dump', false)).toBe(true);
    await azure.delete('db/x.dump');
    await azure.delete('db/x.dump.meta.json');
    const listed: string[] = [];
    for await (const object of azure.list('')) listed.push(object.key);
    expect(listed).toEqual([]);
  }, 60_000);
});
