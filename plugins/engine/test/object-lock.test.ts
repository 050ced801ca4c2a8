// Backup runs to an S3 destination with Object Lock, on the real Ceph RADOS Gateway of the tests (issue 45,
// acceptance 1): the backup is written with the retain-until date its retention policy gives (sidecars without one),
// the destination's own credentials cannot delete it, and retention keeps a backup the bucket still locks without
// failing the run.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { CreateBucketCommand, DeleteBucketCommand, DeleteObjectCommand, HeadObjectCommand, ListObjectVersionsCommand, PutObjectLegalHoldCommand, S3Client } from '@aws-sdk/client-s3';
import storageS3 from '@holdfast/storage-s3';
import type { AnyAdapterDefinition } from '@holdfast/kernel';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { call, createTarget, startEngineServer, waitForEnd, type EngineServer, type TestDatabaseTarget } from './support/harness.js';

const STATE_FILE = '/tmp/holdfast-test-services/ceph-rgw/ceph-rgw.json';
const DAY_MS = 24 * 60 * 60 * 1000;

let rgw: { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string };
let admin: S3Client;
const bucket = `holdfast-engine-lock-${randomBytes(5).toString('hex')}`;

beforeAll(async () => {
  try {
    rgw = JSON.parse(await readFile(STATE_FILE, 'utf8'));
  } catch (error) {
    throw new Error(`no Ceph RGW state at ${STATE_FILE} (run npm run test:services): ${(error as Error).message}`);
  }
  admin = new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey } });
  await admin.send(new CreateBucketCommand({ Bucket: bucket, ObjectLockEnabledForBucket: true }));
});

afterAll(async () => {
  if (!admin) return;
  // GOVERNANCE retention: the owner may bypass it to clean up.
  const page = await admin.send(new ListObjectVersionsCommand({ Bucket: bucket }));
  for (const version of [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])]) {
    await admin.send(new DeleteObjectCommand({ Bucket: bucket, Key: version.Key, VersionId: version.VersionId, BypassGovernanceRetention: true }));
  }
  await admin.send(new DeleteBucketCommand({ Bucket: bucket }));
  admin.destroy();
});

describe('backup runs to an object-locked S3 destination', () => {
  let target: TestDatabaseTarget;
  let server: EngineServer;
  let key: string;

  beforeEach(async () => {
    target = await createTarget('sqlite');
    server = await startEngineServer(target, { adapters: [storageS3 as unknown as AnyAdapterDefinition] });
    server.catalog.addConfig({ configId: 'src', name: 'Generated', kind: 'source', adapterId: 'generated', config: { lines: 500 } });
    const config = { preset: 'custom', endpoint: rgw.endpoint, region: rgw.region, bucket, accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey, objectLockMode: 'GOVERNANCE' };
    server.catalog.addConfig({ configId: 's3', name: 'Locked S3', kind: 'storage', adapterId: 's3', config: { ...config, prefix: `run-${randomBytes(3).toString('hex')}`, objectLockMarginDays: 1, objectLockDays: 1 } });
    key = await server.apiKey('ops', ['jobs:execute', 'history:read']);
  });

  afterEach(async () => {
    await server.close();
    await target.drop();
  });

  it('writes the backup with the GFS policy\'s first prune date plus the margin; the sidecar carries no lock; the bucket credentials cannot delete the backup', async () => {
    const gfs = { policyId: 'p1', strategyId: 'gfs', config: { mode: 'gfs', daily: 7, weekly: 4 } };
    server.catalog.addJob({ id: 'job', name: 'locked' }, 'src', [{ configId: 's3', retention: gfs }]);
    const done = await waitForEnd(server.url, key, (await call(server.url, 'POST', '/api/jobs/job/run', { key })).body.executionId);
    expect(done.status).toBe('Success');
    const prefix = (await listKeys()).find((k) => k.endsWith(done.path))!.slice(0, -done.path.length);
    const head = await admin.send(new HeadObjectCommand({ Bucket: bucket, Key: `${prefix}${done.path}` }));
    // daily 7: the start of the backup's UTC day + 7 days, + the 1-day margin.
    const dayStart = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
    expect(head.ObjectLockMode).toBe('GOVERNANCE');
    expect(head.ObjectLockRetainUntilDate?.getTime()).toBe(dayStart + 8 * DAY_MS);
    const sidecar = await admin.send(new HeadObjectCommand({ Bucket: bucket, Key: `${prefix}${done.path}.meta.json` }));
    expect(sidecar.ObjectLockRetainUntilDate).toBeUndefined();
    const refused = await admin.send(new DeleteObjectCommand({ Bucket: bucket, Key: `${prefix}${done.path}`, VersionId: head.VersionId })).then(
      () => 'deleted',
      (error: { name?: string }) => error.name,
    );
    expect(refused).toBe('AccessDenied');
  });

  it('a count-based policy locks for objectLockDays; retention then keeps the older backup as locked and the run stays Success', async () => {
    const keepOne = { policyId: 'p2', strategyId: 'gfs', config: { mode: 'keep-last', count: 1 } };
    server.catalog.addJob({ id: 'job', name: 'keep-one' }, 'src', [{ configId: 's3', retention: keepOne }]);
    const before = Date.now();
    const first = await waitForEnd(server.url, key, (await call(server.url, 'POST', '/api/jobs/job/run', { key })).body.executionId);
    expect(first.status).toBe('Success');
    const prefix = (await listKeys()).find((k) => k.endsWith(first.path))!.slice(0, -first.path.length);
    const head = await admin.send(new HeadObjectCommand({ Bucket: bucket, Key: `${prefix}${first.path}` }));
    expect(head.ObjectLockRetainUntilDate!.getTime()).toBeGreaterThanOrEqual(before + DAY_MS);
    expect(head.ObjectLockRetainUntilDate!.getTime()).toBeLessThanOrEqual(Date.now() + DAY_MS);

    const second = await waitForEnd(server.url, key, (await call(server.url, 'POST', '/api/jobs/job/run', { key })).body.executionId);
    expect(second.status).toBe('Success');
    const messages = second.logs.map((entry: { message: string }) => entry.message);
    expect(messages).toContainEqual(expect.stringMatching(new RegExp(`kept ${first.path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}, still under an object lock: .*locked until ${head.ObjectLockRetainUntilDate!.toISOString()}`)));
    expect(messages).toContainEqual(expect.stringMatching(/retention on Locked S3: kept 2 \(1 under an object lock\), deleted 0/));
    expect(await listKeys()).toEqual(expect.arrayContaining([`${prefix}${first.path}`, `${prefix}${first.path}.meta.json`]));
  });

  it('a run asked to lock its backup also sets the legal hold on the object-locked destination', async () => {
    server.catalog.addJob({ id: 'job', name: 'held' }, 'src', [{ configId: 's3' }]);
    const done = await waitForEnd(server.url, key, (await call(server.url, 'POST', '/api/jobs/job/run', { key, json: { lock: true } })).body.executionId);
    expect(done.status).toBe('Success');
    const prefix = (await listKeys()).find((k) => k.endsWith(done.path))!.slice(0, -done.path.length);
    const head = await admin.send(new HeadObjectCommand({ Bucket: bucket, Key: `${prefix}${done.path}` }));
    expect(head.ObjectLockLegalHoldStatus).toBe('ON');
    // No retention policy: the destination's objectLockDays applies.
    expect(head.ObjectLockRetainUntilDate!.getTime()).toBeGreaterThan(Date.now() + DAY_MS - 60_000);
    await admin.send(new PutObjectLegalHoldCommand({ Bucket: bucket, Key: `${prefix}${done.path}`, LegalHold: { Status: 'OFF' } }));
  });

  it('the retention preview shows a backup the policy would prune but the bucket still locks as kept, with the date the bucket has', async () => {
    // daily 1: a second backup on the same UTC day makes the policy prune the first, which the bucket locks until the
    // start of its day + 1 day + the 1-day margin.
    const gfs = { policyId: 'p3', strategyId: 'gfs', config: { mode: 'gfs', daily: 1 } };
    server.catalog.addJob({ id: 'job', name: 'daily-one' }, 'src', [{ configId: 's3', retention: gfs }]);
    const first = await waitForEnd(server.url, key, (await call(server.url, 'POST', '/api/jobs/job/run', { key })).body.executionId);
    const second = await waitForEnd(server.url, key, (await call(server.url, 'POST', '/api/jobs/job/run', { key })).body.executionId);
    expect([first.status, second.status]).toEqual(['Success', 'Success']);
    const prefix = (await listKeys()).find((k) => k.endsWith(first.path))!.slice(0, -first.path.length);
    const head = await admin.send(new HeadObjectCommand({ Bucket: bucket, Key: `${prefix}${first.path}` }));
    const reader = await server.apiKey('reader', ['jobs:read']);
    const preview = await call(server.url, 'GET', '/api/jobs/job/retention-preview', { key: reader });
    expect(preview.status).toBe(200);
    const [destination] = preview.body.data;
    expect(destination).toMatchObject({ configId: 's3', policyId: 'p3', error: null });
    const byKey = Object.fromEntries(destination.backups.map((b: { key: string }) => [b.key, b]));
    const until = head.ObjectLockRetainUntilDate!.toISOString();
    expect(byKey[first.path]).toEqual({
      key: first.path,
      createdAt: expect.any(String),
      locked: false,
      action: 'keep',
      retainUntil: until,
      reason: expect.stringMatching(new RegExp(`^locked until ${until} by the destination's object lock \\(the policy would prune it: .+\\)$`)),
    });
    expect(byKey[second.path]).toMatchObject({ action: 'keep', retainUntil: expect.any(String) });
    expect(byKey[second.path].reason).not.toMatch(/object lock/);
  });

  async function listKeys(): Promise<string[]> {
    const page = await admin.send(new ListObjectVersionsCommand({ Bucket: bucket }));
    return (page.Versions ?? []).map((version) => version.Key ?? '');
  }
});
