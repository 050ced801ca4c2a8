import type { ContainerClient } from '@azure/storage-blob';
import type { StorageObjectInfo } from '@holdfast/sdk';
import { keyOfBlob } from './keys.js';

/** Blobs per listing request (the service maximum is 5000; smaller pages keep each answer quick). */
const PAGE_SIZE = 1000;

/**
 * Lists committed blobs whose name starts with `namePrefix`, page by page. Uncommitted blocks of in-flight or failed
 * uploads are never listed. Directory markers of hierarchical-namespace (ADLS Gen2) accounts are skipped.
 */
export async function* listBlobs(
  container: ContainerClient,
  root: string,
  namePrefix: string,
  signal?: AbortSignal,
): AsyncIterable<StorageObjectInfo> {
  const pages = container.listBlobsFlat({ prefix: namePrefix, includeMetadata: true, abortSignal: signal }).byPage({ maxPageSize: PAGE_SIZE });
  for await (const page of pages) {
    for (const item of page.segment.blobItems) {
      if (item.metadata?.hdi_isfolder === 'true') continue;
      const key = keyOfBlob(root, item.name);
      if (key === undefined) continue;
      yield { key, size: item.properties.contentLength ?? 0, modifiedAt: item.properties.lastModified };
    }
  }
}
