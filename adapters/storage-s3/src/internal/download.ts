import { addAbortSignal, type Readable } from 'node:stream';
import { AdapterError, type ByteRange } from '@holdfast/sdk';
import { archivedObjectError, isArchivedObjectError, type ArchiveState } from './archived.js';
import type { S3Connection } from './client.js';
import { S3_ORIGIN, notFound, s3ErrorName, toAdapterError } from './errors.js';

/** `Range` header value of an inclusive range; invalid ranges are a CONFIG error naming the key. */
export function rangeHeader(key: string, range: ByteRange | undefined): string | undefined {
  if (!range) return undefined;
  const { start, end } = range;
  const isValid = Number.isInteger(start) && start >= 0 && (end === undefined || (Number.isInteger(end) && end >= start));
  if (!isValid) throw new AdapterError(S3_ORIGIN, 'CONFIG', `invalid range ${start}-${end ?? ''} for "${key}" (start >= 0, end >= start)`);
  return `bytes=${start}-${end ?? ''}`;
}

async function archiveStateOf(connection: S3Connection, objectKey: string): Promise<ArchiveState> {
  try {
    const head = await connection.client.send(new connection.sdk.HeadObjectCommand({ Bucket: connection.bucket, Key: objectKey }), { abortSignal: AbortSignal.timeout(15_000) });
    return { storageClass: head.StorageClass, restore: head.Restore };
  } catch {
    // The HEAD only improves the message; the archive error stands without it.
    return {};
  }
}

/**
 * Opens a read of an object (or an inclusive byte range of it). An archived object (GLACIER / DEEP_ARCHIVE, not
 * restored) throws a descriptive CONFIG error saying how to restore it, never an empty stream.
 */
export async function openObject(
  connection: S3Connection,
  location: { key: string; objectKey: string },
  options: { range?: ByteRange; signal?: AbortSignal },
): Promise<Readable> {
  const Range = rangeHeader(location.key, options.range);
  try {
    const answer = await connection.client.send(new connection.sdk.GetObjectCommand({ Bucket: connection.bucket, Key: location.objectKey, Range }), { abortSignal: options.signal });
    const body = answer.Body as Readable | undefined;
    if (!body) throw new AdapterError(S3_ORIGIN, 'TRANSIENT', `the server answered the read of "${location.key}" without a body`);
    return options.signal ? addAbortSignal(options.signal, body) : body;
  } catch (error) {
    if (isArchivedObjectError(error)) {
      throw archivedObjectError({ bucket: connection.bucket, ...location }, await archiveStateOf(connection, location.objectKey), error);
    }
    const name = s3ErrorName(error);
    if (name === 'NoSuchKey' || name === 'NotFound') throw notFound(location.key);
    if (name === 'InvalidRange') {
      throw new AdapterError(S3_ORIGIN, 'CONFIG', `invalid range ${Range} for "${location.key}": the start lies at or past the end of the object`, { cause: error });
    }
    throw toAdapterError(error, `cannot read "${location.key}" from ${connection.where}`, connection.secrets);
  }
}
