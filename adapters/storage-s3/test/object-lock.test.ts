import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { DeleteObjectCommand, HeadObjectCommand, ListObjectVersionsCommand, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isAdapterError, silentLogger } from '@holdfast/sdk';
import { s3StorageConfig } from '../src/config.js';
import { S3Storage } from '../src/s3-storage.js';
import { adminClient, freshBucket, removeBucket, removeLockedBucket, rgw, rgwConfig, type RgwState } from './server.js';

// S3 Object Lock against the real Ceph RADOS Gateway of the tests (issue 45, acceptance 1 and 4). Retain-until
// dates are a few seconds ahead: RGW honours them to the millisecond.
const MiB = 1024 * 1024;
const DAY_MS = 24 * 60 * 60 * 1000;

let state: RgwState;
let lockBucket: string;
let plainBucket: string;
let admin: S3Client;
const adapters: S3Storage[] = [];

function storage(bucket: string, extra: Record<string, unknown> = {}): S3Storage {
  const adapter = new S3Storage(s3StorageConfig.parse(rgwConfig(state, bucket, extra)), { logger: silentLogger });
  adapters.push(adapter);
  return adapter;
}

const locked = (extra: Record<string, unknown> = {}) => storage(lockBucket, { objectLockMode: 'GOVERNANCE', objectLockMarginDays: 0, ...extra });

async function versionsOf(bucket: string, objectKey: string): Promise<string[]> {
  const page = await admin.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: objectKey }));
  return [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])].filter((item) => item.Key === objectKey).map((item) => item.VersionId ?? '');
}

async function sleepUntil(date: Date): Promise<void> {
  const wait = date.getTime() - Date.now() + 300;
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

async function lockedErrorOf(promise: Promise<unknown>): Promise<Error & { code: string }> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(isAdapterError(error), `expected a LOCKED AdapterError, got ${String(error)}`).toBe(true);
  return error as Error & { code: string };
}

beforeAll(async () => {
  state = await rgw();
  lockBucket = await freshBucket(state, { objectLock: true });
  plainBucket = await freshBucket(state);
  admin = adminClient(state);
});
afterAll(async () => {
  for (const adapter of adapters) await adapter.dispose();
  await removeLockedBucket(state, lockBucket);
  await removeBucket(state, plainBucket);
  admin.destroy();
});

describe('storage-s3 Object Lock against Ceph RGW', () => {
  it('writes a backup with its retain-until date; the destination credentials cannot delete that version until then, afterwards the adapter removes every version', async () => {
    const adapter = locked();
    const retainUntil = new Date(Date.now() + 6_000);
    await adapter.put('lock/one.bin', Readable.from([randomBytes(1000)]), { objectLock: { retainUntil } });
    const head = await admin.send(new HeadObjectCommand({ Bucket: lockBucket, Key: 'lock/one.bin' }));
    expect(head.ObjectLockMode).toBe('GOVERNANCE');
    expect(head.ObjectLockRetainUntilDate?.getTime()).toBe(retainUntil.getTime());

    // Outside Holdfast, with the same credentials: deleting the version is refused by the lock.
    const refused = await admin.send(new DeleteObjectCommand({ Bucket: lockBucket, Key: 'lock/one.bin', VersionId: head.VersionId })).then(
      () => 'deleted',
      (error: { name?: string }) => error.name,
    );
    expect(refused).toBe('AccessDenied');

    // Through the adapter: a LOCKED error naming the date, and the backup is still there.
    const error = await lockedErrorOf(adapter.delete('lock/one.bin'));
    expect(error.code).toBe('LOCKED');
    expect(error.message).toContain(`locked until ${retainUntil.toISOString()}`);
    expect((await adapter.stat('lock/one.bin')).size).toBe(1000);

    await sleepUntil(retainUntil);
    await adapter.delete('lock/one.bin');
    // No delete marker left hiding the data: every version is gone.
    expect(await versionsOf(lockBucket, 'lock/one.bin')).toEqual([]);
  });

  it('locks a multipart backup too (RGW ignores the lock headers of CreateMultipartUpload: the adapter sets the retention after completing)', async () => {
    const adapter = locked({ partSizeMiB: 5 });
    const retainUntil = new Date(Date.now() + 60_000);
    await adapter.put('lock/multi.bin', Readable.from([randomBytes(6 * MiB)]), { objectLock: { retainUntil } });
    const head = await admin.send(new HeadObjectCommand({ Bucket: lockBucket, Key: 'lock/multi.bin' }));
    expect(head.ContentLength).toBe(6 * MiB);
    expect(head.ObjectLockMode).toBe('GOVERNANCE');
    expect(head.ObjectLockRetainUntilDate?.getTime()).toBe(retainUntil.getTime());
    expect((await lockedErrorOf(adapter.delete('lock/multi.bin'))).code).toBe('LOCKED');
  });

  it('without a date from the retention policy, locks for objectLockDays; the margin is added to a policy date', async () => {
    const before = Date.now();
    await locked({ objectLockDays: 2 }).put('lock/default.bin', Readable.from([Buffer.from('x')]), { objectLock: {} });
    const head = await admin.send(new HeadObjectCommand({ Bucket: lockBucket, Key: 'lock/default.bin' }));
    const until = head.ObjectLockRetainUntilDate?.getTime() ?? 0;
    expect(until).toBeGreaterThanOrEqual(before + 2 * DAY_MS);
    expect(until).toBeLessThanOrEqual(Date.now() + 2 * DAY_MS);

    const policyEnd = new Date(Date.now() + 60_000);
    await locked({ objectLockMarginDays: 3 }).put('lock/margin.bin', Readable.from([Buffer.from('y')]), { objectLock: { retainUntil: policyEnd } });
    const margin = await admin.send(new HeadObjectCommand({ Bucket: lockBucket, Key: 'lock/margin.bin' }));
    expect(margin.ObjectLockRetainUntilDate?.getTime()).toBe(policyEnd.getTime() + 3 * DAY_MS);
  });

  it('writes an object that does not ask for the lock (a sidecar) without retention, so Holdfast can rewrite and delete it', async () => {
    const adapter = locked();
    await adapter.put('lock/x.dump.meta.json', Readable.from([Buffer.from('{}')]));
    const head = await admin.send(new HeadObjectCommand({ Bucket: lockBucket, Key: 'lock/x.dump.meta.json' }));
    expect(head.ObjectLockMode).toBeUndefined();
    expect(head.ObjectLockRetainUntilDate).toBeUndefined();
    await adapter.put('lock/x.dump.meta.json', Readable.from([Buffer.from('{"locked":true}')]));
    await adapter.delete('lock/x.dump.meta.json');
    expect(await versionsOf(lockBucket, 'lock/x.dump.meta.json')).toEqual([]);
  });

  it('refuses a retain-until date in the past with CONFIG, before anything is stored', async () => {
    const error = await locked().put('lock/past.bin', Readable.from([Buffer.from('z')]), { objectLock: { retainUntil: new Date(Date.now() - 1000) } }).catch((thrown: unknown) => thrown);
    expect(isAdapterError(error) && error.code).toBe('CONFIG');
    expect((error as Error).message).toContain('is not in the future');
    expect(await versionsOf(lockBucket, 'lock/past.bin')).toEqual([]);
  });

  it('a legal hold (SPEC locked) blocks deletion after the retain-until date until it is removed', async () => {
    const adapter = locked();
    const retainUntil = new Date(Date.now() + 2_000);
    await adapter.put('lock/held.bin', Readable.from([Buffer.from('held')]), { objectLock: { retainUntil } });
    expect(await adapter.setLegalHold('lock/held.bin', true)).toBe(true);
    await sleepUntil(retainUntil);

    const head = await admin.send(new HeadObjectCommand({ Bucket: lockBucket, Key: 'lock/held.bin' }));
    expect(head.ObjectLockLegalHoldStatus).toBe('ON');
    const refused = await admin.send(new DeleteObjectCommand({ Bucket: lockBucket, Key: 'lock/held.bin', VersionId: head.VersionId })).then(
      () => 'deleted',
      (error: { name?: string }) => error.name,
    );
    expect(refused).toBe('AccessDenied');
    const error = await lockedErrorOf(adapter.delete('lock/held.bin'));
    expect(error.code).toBe('LOCKED');
    expect(error.message).toContain('legal hold');

    expect(await adapter.setLegalHold('lock/held.bin', false)).toBe(true);
    await adapter.delete('lock/held.bin');
    expect(await versionsOf(lockBucket, 'lock/held.bin')).toEqual([]);
  });

  it('test-connection reports the bucket lock state and refuses objectLockMode on a bucket without Object Lock', async () => {
    const onLocked = await locked().check();
    expect(onLocked.ok).toBe(true);
    expect(onLocked.message).toContain('Object Lock: enabled, default retention none');

    const plainWithout = await storage(plainBucket).check();
    expect(plainWithout.ok).toBe(true);
    expect(plainWithout.message).toContain('Object Lock: not enabled on the bucket');

    const plainWith = await storage(plainBucket, { objectLockMode: 'COMPLIANCE' }).check();
    expect(plainWith.ok).toBe(false);
    expect(plainWith.message).toContain('objectLockMode COMPLIANCE needs a bucket with Object Lock enabled');
  });

  it('verifyConfig (run when a configuration is saved) refuses lock on a bucket without Object Lock and passes otherwise', async () => {
    const refused = await storage(plainBucket, { objectLockMode: 'GOVERNANCE' }).verifyConfig().catch((thrown: unknown) => thrown);
    expect(isAdapterError(refused) && refused.code).toBe('CONFIG');
    expect((refused as Error).message).toContain(`bucket ${plainBucket} does not have Object Lock enabled`);
    await expect(locked().verifyConfig()).resolves.toBeUndefined();
    await expect(storage(plainBucket).verifyConfig()).resolves.toBeUndefined();
    // An unreachable endpoint is not a definite answer: saving stays possible, the connection test reports it.
    await expect(storage(plainBucket, { objectLockMode: 'GOVERNANCE', endpoint: 'http://127.0.0.1:1', connectTimeoutSeconds: 1 }).verifyConfig()).resolves.toBeUndefined();
  });

  it('a bucket without Object Lock: a put asking for lock fails with CONFIG and stores nothing; without the option nothing changes', async () => {
    const error = await storage(plainBucket, { objectLockMode: 'GOVERNANCE' })
      .put('plain/a.bin', Readable.from([Buffer.from('a')]), { objectLock: { retainUntil: new Date(Date.now() + 60_000) } })
      .catch((thrown: unknown) => thrown);
    expect(isAdapterError(error) && error.code).toBe('CONFIG');
    expect((error as Error).message).toContain('the bucket refused the object lock');
    expect(await versionsOf(plainBucket, 'plain/a.bin')).toEqual([]);

    const plain = storage(plainBucket);
    // objectLock is ignored by a destination without objectLockMode, and a legal hold is a no-op that says so.
    await plain.put('plain/b.bin', Readable.from([Buffer.from('b')]), { objectLock: { retainUntil: new Date(Date.now() + 60_000) } });
    expect(await plain.setLegalHold('plain/b.bin', true)).toBe(false);
    await plain.delete('plain/b.bin');
    expect(await versionsOf(plainBucket, 'plain/b.bin')).toEqual([]);
  });
});
