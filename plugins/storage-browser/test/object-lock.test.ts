// S3 Object Lock end to end on the real Ceph RADOS Gateway of the tests (issue 45, acceptance 1): the engine's
// retention keeps a backup the bucket still locks and reports it, deletes it once the date has passed; SPEC's
// `locked` flag sets and removes an S3 legal hold through the lock route; the delete route answers 409 naming the
// date. Retain-until dates are seconds ahead (RGW honours them to the millisecond).
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  PutObjectLegalHoldCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { applyRetention, planRetention } from '@holdfast/engine';
import type { RetentionStrategy, StorageCapabilities } from '@holdfast/kernel';
import storageS3, { S3Storage, s3StorageConfig } from '@holdfast/storage-s3';
import { silentLogger } from '@holdfast/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBrowserServer, type BrowserServer } from './support/harness.js';

const DELETE = 'perm:storage:delete';
const STATE_FILE = '/tmp/holdfast-test-services/ceph-rgw/ceph-rgw.json';

interface RgwState {
  endpoint: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/** A policy that prunes every backup: the lock, not the policy, must be what keeps them. */
const pruneEverything: RetentionStrategy = {
  select: (backups) => backups.map((backup) => ({ key: backup.key, action: 'prune' as const, reason: 'test: prune all' })),
};

let state: RgwState;
let admin: S3Client;
let bucket: string;
let server: BrowserServer;
let adapter: S3Storage;
const noLog = { info: () => undefined, error: () => undefined };

function lockConfig(): Record<string, unknown> {
  return {
    preset: 'custom',
    endpoint: state.endpoint,
    region: state.region,
    bucket,
    accessKeyId: state.accessKeyId,
    secretAccessKey: state.secretAccessKey,
    partSizeMiB: 5,
    parallelParts: 2,
    objectLockMode: 'GOVERNANCE',
    objectLockMarginDays: 0,
  };
}

const instance = () => ({ configId: 's3', name: 'Locked S3', adapterId: 's3', adapter, capabilities: storageS3.capabilities as StorageCapabilities });

/** A backup as the engine writes it: the data object with its retain-until date, the sidecar without a lock. */
async function writeBackup(key: string, retainUntil: Date): Promise<void> {
  await adapter.put(key, Readable.from([randomBytes(2048)]), { objectLock: { retainUntil } });
  const sidecar = JSON.stringify({ formatVersion: 1, createdAt: new Date().toISOString(), sha256: 'a'.repeat(64), locked: false, jobId: 'job-lock', jobName: 'lock' });
  await adapter.put(`${key}.meta.json`, Readable.from([Buffer.from(sidecar)]));
}

async function versionsOf(objectKey: string): Promise<number> {
  const page = await admin.send(new ListObjectVersionsCommand({ Bucket: bucket, Prefix: objectKey }));
  return [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])].filter((item) => item.Key === objectKey).length;
}

async function sleepUntil(date: Date): Promise<void> {
  const wait = date.getTime() - Date.now() + 300;
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

async function deleteOutsideHoldfast(key: string): Promise<string> {
  const head = await admin.send(new HeadObjectCommand({ Bucket: bucket, Key: key }));
  return admin.send(new DeleteObjectCommand({ Bucket: bucket, Key: key, VersionId: head.VersionId })).then(
    () => 'deleted',
    (error: { name?: string }) => error.name ?? 'error',
  );
}

beforeAll(async () => {
  try {
    state = JSON.parse(await readFile(STATE_FILE, 'utf8')) as RgwState;
  } catch (error) {
    throw new Error(`no Ceph RGW state at ${STATE_FILE} (run npm run test:services): ${(error as Error).message}`);
  }
  admin = new S3Client({
    endpoint: state.endpoint,
    region: state.region,
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    credentials: { accessKeyId: state.accessKeyId, secretAccessKey: state.secretAccessKey },
  });
  bucket = `holdfast-lock-${randomBytes(6).toString('hex')}`;
  await admin.send(new CreateBucketCommand({ Bucket: bucket, ObjectLockEnabledForBucket: true }));
  adapter = new S3Storage(s3StorageConfig.parse(lockConfig()), { logger: silentLogger });
  server = await startBrowserServer('sqlite');
  server.catalog.add({ configId: 's3', name: 'Locked S3', kind: 'storage', adapterId: 's3', config: lockConfig() });
});

afterAll(async () => {
  await server?.close();
  await adapter?.dispose();
  if (!admin) return;
  const page = await admin.send(new ListObjectVersionsCommand({ Bucket: bucket }));
  for (const version of page.Versions ?? []) {
    await admin.send(new PutObjectLegalHoldCommand({ Bucket: bucket, Key: version.Key, VersionId: version.VersionId, LegalHold: { Status: 'OFF' } })).catch(() => undefined);
    await admin.send(new DeleteObjectCommand({ Bucket: bucket, Key: version.Key, VersionId: version.VersionId, BypassGovernanceRetention: true }));
  }
  for (const marker of page.DeleteMarkers ?? []) await admin.send(new DeleteObjectCommand({ Bucket: bucket, Key: marker.Key, VersionId: marker.VersionId }));
  await admin.send(new DeleteBucketCommand({ Bucket: bucket }));
  admin.destroy();
});

describe('S3 Object Lock through retention and the storage browser', () => {
  it('retention keeps a backup still under its retain-until date and reports it locked; the API delete answers 409 naming the date; after the date retention deletes it', async () => {
    const retainUntil = new Date(Date.now() + 8_000);
    await writeBackup('ret/a.dump', retainUntil);

    expect(await deleteOutsideHoldfast('ret/a.dump')).toBe('AccessDenied');

    const refused = await server.call('DELETE', '/api/storage/s3/files', { token: DELETE, json: { file: 'ret/a.dump' } });
    expect(refused.status).toBe(409);
    expect(refused.body).toEqual({ error: expect.stringContaining(`locked until ${retainUntil.toISOString()}`) });
    expect(refused.body.error).toMatch(/^Cannot delete yet: "ret\/a\.dump" is locked until /);

    const verdicts = await planRetention(instance(), pruneEverything, { jobId: 'job-lock', timezone: 'UTC' });
    expect(verdicts.map((verdict) => [verdict.key, verdict.action])).toEqual([['ret/a.dump', 'prune']]);
    const first = await applyRetention(instance(), verdicts, noLog);
    expect(first).toEqual({ deleted: [], locked: ['ret/a.dump'], errors: [] });
    // Kept whole: the backup and its sidecar are still there.
    expect((await adapter.stat('ret/a.dump')).size).toBe(2048);
    expect(await versionsOf('ret/a.dump.meta.json')).toBe(1);

    await sleepUntil(retainUntil);
    const second = await applyRetention(instance(), await planRetention(instance(), pruneEverything, { jobId: 'job-lock', timezone: 'UTC' }), noLog);
    expect(second).toEqual({ deleted: ['ret/a.dump'], locked: [], errors: [] });
    expect(await versionsOf('ret/a.dump')).toBe(0);
    expect(await versionsOf('ret/a.dump.meta.json')).toBe(0);
  });

  it('locking a backup sets an S3 legal hold that blocks deletion after its date; unlocking removes it and the delete then works', async () => {
    const retainUntil = new Date(Date.now() + 2_000);
    await writeBackup('hold/b.dump', retainUntil);
    expect(await server.call('POST', '/api/storage/s3/lock', { token: DELETE, json: { file: 'hold/b.dump', locked: true } })).toMatchObject({ status: 200, body: { locked: true } });
    expect((await admin.send(new HeadObjectCommand({ Bucket: bucket, Key: 'hold/b.dump' }))).ObjectLockLegalHoldStatus).toBe('ON');
    await sleepUntil(retainUntil);

    expect(await deleteOutsideHoldfast('hold/b.dump')).toBe('AccessDenied');
    // Retention never plans a locked backup for deletion; even if it did, the store would refuse (LOCKED, kept).
    const verdicts = await planRetention(instance(), pruneEverything, { jobId: 'job-lock', timezone: 'UTC' });
    expect(verdicts.find((verdict) => verdict.key === 'hold/b.dump')).toMatchObject({ action: 'keep', locked: true });
    expect(await applyRetention(instance(), [{ key: 'hold/b.dump', createdAt: '', locked: false, action: 'prune', reason: 'forced' }], noLog)).toEqual({ deleted: [], locked: ['hold/b.dump'], errors: [] });

    expect(await server.call('POST', '/api/storage/s3/lock', { token: DELETE, json: { file: 'hold/b.dump', locked: false } })).toMatchObject({ status: 200, body: { locked: false } });
    expect((await admin.send(new HeadObjectCommand({ Bucket: bucket, Key: 'hold/b.dump' }))).ObjectLockLegalHoldStatus).toBe('OFF');
    expect(await server.call('DELETE', '/api/storage/s3/files', { token: DELETE, json: { file: 'hold/b.dump' } })).toMatchObject({ status: 200, body: { success: true } });
    expect(await versionsOf('hold/b.dump')).toBe(0);
  });
});
