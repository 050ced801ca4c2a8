import type { StorageObjectInfo } from '@holdfast/sdk';
import type { S3Connection } from './client.js';
import { toAdapterError } from './errors.js';
import { storageKeyOf } from './keys.js';

/**
 * Every object under `s3Prefix`, page by page (ListObjectsV2, 1,000 per page). A failed page throws an AdapterError:
 * a listing is never cut short or empty because of an access failure.
 */
export async function* listObjects(
  connection: S3Connection,
  rootPrefix: string,
  s3Prefix: string,
  signal?: AbortSignal,
): AsyncIterable<StorageObjectInfo> {
  let ContinuationToken: string | undefined;
  do {
    let page;
    try {
      page = await connection.client.send(new connection.sdk.ListObjectsV2Command({ Bucket: connection.bucket, Prefix: s3Prefix, ContinuationToken }), { abortSignal: signal });
    } catch (error) {
      throw toAdapterError(error, `cannot list "${s3Prefix}" in ${connection.where}`, connection.secrets);
    }
    for (const item of page.Contents ?? []) {
      const key = item.Key === undefined ? undefined : storageKeyOf(rootPrefix, item.Key);
      if (key === undefined) continue;
      yield { key, size: item.Size ?? 0, modifiedAt: item.LastModified ?? new Date(0) };
    }
    ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (ContinuationToken);
}

/** Aborts every unfinished multipart upload of exactly `objectKey` (what a crashed put left); resolves how many. */
export async function abortIncompleteUploads(connection: S3Connection, objectKey: string): Promise<number> {
  let aborted = 0;
  let KeyMarker: string | undefined;
  let UploadIdMarker: string | undefined;
  do {
    const page = await connection.client.send(new connection.sdk.ListMultipartUploadsCommand({ Bucket: connection.bucket, Prefix: objectKey, KeyMarker, UploadIdMarker }));
    for (const upload of page.Uploads ?? []) {
      if (upload.Key !== objectKey || !upload.UploadId) continue;
      await connection.client.send(new connection.sdk.AbortMultipartUploadCommand({ Bucket: connection.bucket, Key: objectKey, UploadId: upload.UploadId }));
      aborted++;
    }
    const more = page.IsTruncated === true;
    KeyMarker = more ? page.NextKeyMarker : undefined;
    UploadIdMarker = more ? page.NextUploadIdMarker : undefined;
  } while (KeyMarker);
  return aborted;
}
