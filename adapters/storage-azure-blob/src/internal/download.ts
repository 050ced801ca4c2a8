import { addAbortSignal, type Readable } from 'node:stream';
import type { BlobClient } from '@azure/storage-blob';
import { AdapterError, resolveByteRange, type GetOptions } from '@holdfast/sdk';
import { AZURE_ORIGIN } from './errors.js';

/** Retries of a broken download stream, resumed at the byte where it broke (same ETag). */
const DOWNLOAD_RESUMES = 5;

/** The error of a blob in the Archive tier, which cannot be read until it is rehydrated. */
function archived(key: string, status: string | undefined): AdapterError {
  const pending = status?.startsWith('rehydrate-pending')
    ? ` A rehydration is in progress (${status}); try again when it finishes (up to 15 hours).`
    : ' Rehydrate it first (Set Blob Tier to Hot or Cool, or copy it to a new blob; standard priority takes up to 15 hours), then restore again.';
  return new AdapterError(AZURE_ORIGIN, 'UNSUPPORTED', `object "${key}" is in the Archive access tier and cannot be read.${pending}`);
}

/**
 * Opens a read of a blob (or an inclusive byte range of it). The ETag read with the size pins the version, so a
 * concurrent overwrite fails the read instead of mixing two versions; the SDK resumes a broken connection.
 */
export async function openBlobRead(blob: BlobClient, key: string, options: GetOptions): Promise<Readable> {
  const properties = await blob.getProperties({ abortSignal: options.signal });
  if (properties.accessTier === 'Archive') throw archived(key, properties.archiveStatus);
  const { start, end } = resolveByteRange(AZURE_ORIGIN, key, properties.contentLength ?? 0, options.range);
  const offset = start ?? 0;
  const count = end === undefined ? undefined : end - offset + 1;
  const response = await blob.download(offset, count, {
    abortSignal: options.signal,
    conditions: properties.etag ? { ifMatch: properties.etag } : undefined,
    maxRetryRequests: DOWNLOAD_RESUMES,
  });
  const body = response.readableStreamBody as Readable | undefined;
  if (!body) throw new AdapterError(AZURE_ORIGIN, 'TRANSIENT', `the service sent no body for "${key}"`);
  return options.signal ? addAbortSignal(options.signal, body) : body;
}
