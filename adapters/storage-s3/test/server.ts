import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListObjectVersionsCommand,
  PutObjectLegalHoldCommand,
  S3Client,
} from '@aws-sdk/client-s3';

/** What tooling/test-services/ceph-rgw.mjs wrote about the running Ceph RADOS Gateway. */
export interface RgwState {
  endpoint: string;
  region: string;
  forcePathStyle: boolean;
  accessKeyId: string;
  secretAccessKey: string;
  server: string;
}

const STATE_FILE = '/tmp/holdfast-test-services/ceph-rgw/ceph-rgw.json';

/** Reads the gateway state file the global setup wrote. */
export async function rgw(): Promise<RgwState> {
  try {
    return JSON.parse(await readFile(STATE_FILE, 'utf8')) as RgwState;
  } catch (error) {
    throw new Error(`no Ceph RGW state at ${STATE_FILE} (run node tooling/test-services/ceph-rgw.mjs): ${(error as Error).message}`);
  }
}

/** A plain SDK client on the test gateway, for setting up and inspecting what the adapter did. */
export function adminClient(state: RgwState): S3Client {
  return new S3Client({
    endpoint: state.endpoint,
    region: state.region,
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    credentials: { accessKeyId: state.accessKeyId, secretAccessKey: state.secretAccessKey },
  });
}

/** Creates a bucket with a unique name and returns it; `objectLock` creates it with S3 Object Lock enabled. */
export async function freshBucket(state: RgwState, options: { objectLock?: boolean } = {}): Promise<string> {
  const bucket = `holdfast-s3-${randomBytes(6).toString('hex')}`;
  const client = adminClient(state);
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket, ...(options.objectLock ? { ObjectLockEnabledForBucket: true } : {}) }));
  } finally {
    client.destroy();
  }
  return bucket;
}

/** Empties and deletes a test bucket: objects, unfinished multipart uploads, then the bucket. */
export async function removeBucket(state: RgwState, bucket: string): Promise<void> {
  const client = adminClient(state);
  try {
    for (;;) {
      const page = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
      const objects = (page.Contents ?? []).map((item) => ({ Key: item.Key }));
      if (objects.length === 0) break;
      await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: objects } }));
    }
    const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
    for (const upload of uploads.Uploads ?? []) {
      await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: upload.Key, UploadId: upload.UploadId }));
    }
    await client.send(new DeleteBucketCommand({ Bucket: bucket }));
  } finally {
    client.destroy();
  }
}

/** A working adapter config for `bucket` (small parts keep the RAM-backed test cluster and the RSS checks small). */
export function rgwConfig(state: RgwState, bucket: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    preset: 'custom',
    endpoint: state.endpoint,
    region: state.region,
    bucket,
    accessKeyId: state.accessKeyId,
    secretAccessKey: state.secretAccessKey,
    partSizeMiB: 5,
    parallelParts: 4,
    ...extra,
  };
}

/**
 * Empties and deletes an Object Lock test bucket: every version and delete marker, with legal holds removed and
 * GOVERNANCE retention bypassed (the test user owns the bucket). COMPLIANCE versions must have passed their date.
 */
export async function removeLockedBucket(state: RgwState, bucket: string): Promise<void> {
  const client = adminClient(state);
  try {
    const page = await client.send(new ListObjectVersionsCommand({ Bucket: bucket }));
    for (const version of page.Versions ?? []) {
      await client.send(new PutObjectLegalHoldCommand({ Bucket: bucket, Key: version.Key, VersionId: version.VersionId, LegalHold: { Status: 'OFF' } })).catch(() => undefined);
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: version.Key, VersionId: version.VersionId, BypassGovernanceRetention: true }));
    }
    for (const marker of page.DeleteMarkers ?? []) {
      await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: marker.Key, VersionId: marker.VersionId }));
    }
    await client.send(new DeleteBucketCommand({ Bucket: bucket }));
  } finally {
    client.destroy();
  }
}
