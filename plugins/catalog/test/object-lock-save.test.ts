// Saving an S3 destination that asks for Object Lock (issue 45, acceptance 4): against the real Ceph RADOS Gateway
// of the tests, a bucket without Object Lock is refused with a 400 naming the problem and nothing is stored; a bucket
// with it saves; a destination without the option saves on any bucket as before.
import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { CreateBucketCommand, DeleteBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSite, startCatalog, type CatalogServer, type Site } from './harness.js';

const STATE_FILE = '/tmp/holdfast-test-services/ceph-rgw/ceph-rgw.json';

let rgw: { endpoint: string; region: string; accessKeyId: string; secretAccessKey: string };
let admin: S3Client;
let site: Site;
let server: CatalogServer;
const plainBucket = `holdfast-save-${randomBytes(5).toString('hex')}`;
const lockBucket = `holdfast-save-lock-${randomBytes(5).toString('hex')}`;

const s3Config = (bucket: string, extra: Record<string, unknown> = {}) => ({
  preset: 'custom',
  endpoint: rgw.endpoint,
  region: rgw.region,
  bucket,
  accessKeyId: rgw.accessKeyId,
  secretAccessKey: rgw.secretAccessKey,
  ...extra,
});

beforeAll(async () => {
  try {
    rgw = JSON.parse(await readFile(STATE_FILE, 'utf8'));
  } catch (error) {
    throw new Error(`no Ceph RGW state at ${STATE_FILE} (run npm run test:services): ${(error as Error).message}`);
  }
  admin = new S3Client({ endpoint: rgw.endpoint, region: rgw.region, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED', credentials: { accessKeyId: rgw.accessKeyId, secretAccessKey: rgw.secretAccessKey } });
  await admin.send(new CreateBucketCommand({ Bucket: plainBucket }));
  await admin.send(new CreateBucketCommand({ Bucket: lockBucket, ObjectLockEnabledForBucket: true }));
  site = await createSite('sqlite');
  server = await startCatalog(site);
});

afterAll(async () => {
  await server?.close();
  await site?.remove();
  if (!admin) return;
  await admin.send(new DeleteBucketCommand({ Bucket: plainBucket }));
  await admin.send(new DeleteBucketCommand({ Bucket: lockBucket }));
  admin.destroy();
});

describe('saving an S3 destination with Object Lock', () => {
  it('refuses objectLockMode on a bucket without Object Lock (400, nothing stored), on create and on update', async () => {
    const refused = await server.call('POST', '/api/adapters', { name: 'No lock', type: 'storage', adapterId: 's3', config: s3Config(plainBucket, { objectLockMode: 'COMPLIANCE' }) });
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ error: expect.stringContaining(`objectLockMode COMPLIANCE: bucket ${plainBucket} does not have Object Lock enabled`) });
    const listed = await server.call('GET', '/api/adapters?type=storage');
    expect((listed.json as Array<{ name: string }>).map((row) => row.name)).not.toContain('No lock');

    // Without the option the same bucket saves exactly as before.
    const plain = await server.call('POST', '/api/adapters', { name: 'Plain', type: 'storage', adapterId: 's3', config: s3Config(plainBucket) });
    expect(plain.status).toBe(201);
    const id = (plain.json as { id: string }).id;
    const update = await server.call('PUT', `/api/adapters/${id}`, { config: s3Config(plainBucket, { objectLockMode: 'GOVERNANCE' }) });
    expect(update.status).toBe(400);
    expect(update.json).toMatchObject({ error: expect.stringContaining('does not have Object Lock enabled') });
    const stored = await server.call('GET', `/api/adapters/${id}`);
    expect((stored.json as { config: Record<string, unknown> }).config.objectLockMode).toBeUndefined();
  });

  it('test-connection reports the bucket\'s Object Lock state, and fails for objectLockMode on a bucket without it', async () => {
    const locked = await server.call('POST', '/api/adapters/test-connection', { type: 'storage', adapterId: 's3', config: s3Config(lockBucket, { objectLockMode: 'GOVERNANCE' }) });
    expect(locked.json).toMatchObject({ success: true, message: expect.stringContaining('Object Lock: enabled, default retention none') });
    const plain = await server.call('POST', '/api/adapters/test-connection', { type: 'storage', adapterId: 's3', config: s3Config(plainBucket) });
    expect(plain.json).toMatchObject({ success: true, message: expect.stringContaining('Object Lock: not enabled on the bucket') });
    const asked = await server.call('POST', '/api/adapters/test-connection', { type: 'storage', adapterId: 's3', config: s3Config(plainBucket, { objectLockMode: 'GOVERNANCE' }) });
    expect(asked.json).toMatchObject({ success: false, message: expect.stringContaining('objectLockMode GOVERNANCE needs a bucket with Object Lock enabled') });
  });

  it('saves objectLockMode on a bucket created with Object Lock', async () => {
    const saved = await server.call('POST', '/api/adapters', { name: 'Locked', type: 'storage', adapterId: 's3', config: s3Config(lockBucket, { objectLockMode: 'GOVERNANCE', objectLockDays: 7 }) });
    expect(saved.status).toBe(201);
    expect((saved.json as { config: Record<string, unknown> }).config).toMatchObject({ objectLockMode: 'GOVERNANCE', objectLockDays: 7 });
  });
});
