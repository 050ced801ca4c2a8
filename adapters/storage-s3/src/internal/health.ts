import { randomBytes } from 'node:crypto';
import type { S3Connection } from './client.js';

/**
 * The connection test: HeadBucket (reachable, bucket exists, credentials valid), ListObjectsV2 (may list, and on
 * failure the error body names the cause, which a HEAD cannot), then a multipart upload that is created and aborted
 * at once (may write) - nothing permanent is written, which matters on object-locked buckets. Throws the first failure.
 */
export async function probeBucket(connection: S3Connection, rootPrefix: string, signal: AbortSignal): Promise<void> {
  const Bucket = connection.bucket;
  try {
    await connection.client.send(new connection.sdk.HeadBucketCommand({ Bucket }), { abortSignal: signal });
  } catch (error) {
    // HEAD answers carry no error body ("403", "404"): ask again with a GET, whose error names the cause.
    await connection.client.send(new connection.sdk.ListObjectsV2Command({ Bucket, Prefix: rootPrefix, MaxKeys: 1 }), { abortSignal: signal });
    throw error;
  }
  await connection.client.send(new connection.sdk.ListObjectsV2Command({ Bucket, Prefix: rootPrefix, MaxKeys: 1 }), { abortSignal: signal });
  const Key = `${rootPrefix}.holdfast-check-${randomBytes(8).toString('hex')}`;
  const created = await connection.client.send(new connection.sdk.CreateMultipartUploadCommand({ Bucket, Key }), { abortSignal: signal });
  await connection.client.send(new connection.sdk.AbortMultipartUploadCommand({ Bucket, Key, UploadId: created.UploadId }), { abortSignal: AbortSignal.timeout(15_000) });
}
