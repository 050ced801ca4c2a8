import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { addAbortSignal, type Readable } from 'node:stream';
import type { CompletedPart, ObjectLockMode, StorageClass } from '@aws-sdk/client-s3';
import { AdapterError, type KernelLogger } from '@holdfast/sdk';
import type { S3Connection } from './client.js';
import { S3_ORIGIN } from './errors.js';
import type { LockRetention } from './object-lock.js';
import { MAX_PARTS, maxBytes, partSizeFor, type PartSizing } from './part-size.js';

/** Where an upload goes and how it is cut into parts. */
export interface UploadPlan extends PartSizing {
  bucket: string;
  objectKey: string;
  parallelParts: number;
  storageClass?: string;
  /** Object lock retention to write the object with (object-locked destinations only). */
  lock?: LockRetention;
  signal?: AbortSignal;
  logger: KernelLogger;
}

/** What an upload did: bytes stored and how (the benchmark and the tests read this from the log too). */
export interface UploadReport {
  bytes: number;
  parts: number;
  largestPartBytes: number;
  maxPartsInFlight: number;
  /** The version the upload created, on a versioned bucket. */
  versionId?: string;
}

const md5 = (data: Buffer): string => createHash('md5').update(data).digest('base64');

/**
 * Streams `body` to S3. Up to one part it is a single PutObject; beyond, a multipart upload whose parts are sent
 * `parallelParts` at a time and which completes only after the last part, so readers never see a partial object.
 * On any error or abort the multipart upload is aborted on the server (no orphan parts). Memory: at most
 * `parallelParts` part buffers exist, the one being filled included; they are reused from part to part.
 */
export async function uploadObject(connection: S3Connection, body: Readable, plan: UploadPlan): Promise<UploadReport> {
  const { client, sdk } = connection;
  plan.signal?.throwIfAborted();
  const limit = maxBytes(plan);
  if (plan.knownSize !== undefined && plan.knownSize > limit) {
    throw new AdapterError(S3_ORIGIN, 'CONFIG', `an object of ${plan.knownSize} bytes exceeds ${MAX_PARTS} parts of at most ${plan.maxPartSize} bytes (${limit} bytes): raise maxPartSizeMiB`);
  }
  // One controller for the whole upload: the caller's abort or the first failed part stops every request in flight.
  const stop = new AbortController();
  // Every request in flight adds a few listeners (SDK handler and middleware), plus the body: not a leak.
  setMaxListeners(4 * plan.parallelParts + 8, stop.signal);
  const onAbort = () => stop.abort(plan.signal?.reason);
  plan.signal?.addEventListener('abort', onAbort, { once: true });
  const target = {
    Bucket: plan.bucket,
    Key: plan.objectKey,
    StorageClass: plan.storageClass as StorageClass | undefined,
    ...(plan.lock ? { ObjectLockMode: plan.lock.mode as ObjectLockMode, ObjectLockRetainUntilDate: plan.lock.retainUntil } : {}),
  };
  const state = { uploadId: undefined as string | undefined, failure: undefined as unknown };
  const inFlight = new Set<Promise<void>>();
  const completed: CompletedPart[] = [];
  const free: Buffer[] = [];
  const report: UploadReport = { bytes: 0, parts: 0, largestPartBytes: 0, maxPartsInFlight: 0 };

  const sendPart = (partNumber: number, buffer: Buffer, length: number): void => {
    const data = buffer.subarray(0, length);
    const sending = client
      .send(new sdk.UploadPartCommand({ Bucket: plan.bucket, Key: plan.objectKey, UploadId: state.uploadId, PartNumber: partNumber, Body: data, ContentLength: length, ContentMD5: md5(data) }), { abortSignal: stop.signal })
      .then((answer) => {
        completed.push({ PartNumber: partNumber, ETag: answer.ETag });
        plan.logger.debug({ key: plan.objectKey, partNumber, bytes: length, inFlight: inFlight.size }, 's3 part uploaded');
      })
      .catch((error: unknown) => {
        state.failure ??= error;
        stop.abort(error);
      })
      .finally(() => {
        inFlight.delete(sending);
        free.push(buffer);
      });
    inFlight.add(sending);
    report.maxPartsInFlight = Math.max(report.maxPartsInFlight, inFlight.size);
  };
  // Waits until fewer than `parallelParts` buffers are out, so the next one may be filled.
  const waitForSlot = async (): Promise<void> => {
    while (inFlight.size >= plan.parallelParts) await Promise.race(inFlight);
    if (state.failure !== undefined) throw state.failure;
  };
  const takeBuffer = (size: number): Buffer => {
    // Buffers of a smaller, outgrown part size are dropped; same-size ones are reused so RSS stays flat.
    for (let reused = free.pop(); reused; reused = free.pop()) if (reused.length === size) return reused;
    return Buffer.allocUnsafe(size);
  };

  try {
    let partNumber = 1;
    let buffer = takeBuffer(partSizeFor(partNumber, plan));
    let filled = 0;
    for await (const chunk of addAbortSignal(stop.signal, body) as AsyncIterable<Buffer>) {
      let offset = 0;
      while (offset < chunk.length) {
        if (filled === buffer.length) {
          if (partNumber === 1) state.uploadId = await createUpload(connection, target, stop.signal);
          if (partNumber >= MAX_PARTS) {
            throw new AdapterError(S3_ORIGIN, 'CONFIG', `the backup outgrew ${MAX_PARTS} parts (${limit} bytes at maxPartSizeMiB ${plan.maxPartSize / 1024 / 1024}): raise maxPartSizeMiB`);
          }
          sendPart(partNumber, buffer, filled);
          report.largestPartBytes = Math.max(report.largestPartBytes, filled);
          partNumber++;
          await waitForSlot();
          buffer = takeBuffer(partSizeFor(partNumber, plan));
          filled = 0;
        }
        const taken = chunk.copy(buffer, filled, offset);
        filled += taken;
        offset += taken;
        report.bytes += taken;
      }
    }
    if (state.uploadId === undefined) {
      // Everything fitted into the first part: one PutObject is atomic by itself.
      const data = buffer.subarray(0, filled);
      const put = await client.send(new sdk.PutObjectCommand({ ...target, Body: data, ContentLength: filled, ContentMD5: md5(data) }), { abortSignal: stop.signal });
      return { ...report, parts: 1, largestPartBytes: filled, maxPartsInFlight: 1, versionId: put.VersionId };
    }
    if (filled > 0) {
      sendPart(partNumber, buffer, filled);
      report.largestPartBytes = Math.max(report.largestPartBytes, filled);
    } else partNumber--;
    await Promise.all(inFlight);
    if (state.failure !== undefined) throw state.failure;
    stop.signal.throwIfAborted();
    completed.sort((a, b) => (a.PartNumber ?? 0) - (b.PartNumber ?? 0));
    const completion = await client.send(
      new sdk.CompleteMultipartUploadCommand({ Bucket: plan.bucket, Key: plan.objectKey, UploadId: state.uploadId, MultipartUpload: { Parts: completed } }),
      { abortSignal: stop.signal },
    );
    report.parts = partNumber;
    report.versionId = completion.VersionId;
    plan.logger.info({ key: plan.objectKey, ...report, partSize: plan.partSize, parallelParts: plan.parallelParts }, 's3 multipart upload completed');
    return report;
  } catch (error) {
    // The first failure is the cause; the parts cut off below only fail with AbortErrors.
    const cause = state.failure ?? error;
    stop.abort(cause);
    body.destroy();
    await Promise.allSettled([...inFlight]);
    if (state.uploadId !== undefined) await abortUpload(connection, plan, state.uploadId);
    // The caller's abort wins over whatever error the cut-off requests reported.
    if (plan.signal?.aborted) throw plan.signal.reason ?? cause;
    throw cause;
  } finally {
    plan.signal?.removeEventListener('abort', onAbort);
  }
}

async function createUpload(
  { client, sdk }: S3Connection,
  target: { Bucket: string; Key: string; StorageClass?: StorageClass; ObjectLockMode?: ObjectLockMode; ObjectLockRetainUntilDate?: Date },
  signal: AbortSignal,
): Promise<string> {
  const created = await client.send(new sdk.CreateMultipartUploadCommand({ ...target, ContentType: 'application/octet-stream' }), { abortSignal: signal });
  if (!created.UploadId) throw new AdapterError(S3_ORIGIN, 'TRANSIENT', 'the server started a multipart upload without an UploadId');
  return created.UploadId;
}

/** Aborts a multipart upload so its parts do not linger (and cost storage). Own timeout: the upload's signal fired. */
async function abortUpload({ client, sdk }: S3Connection, plan: UploadPlan, uploadId: string): Promise<void> {
  try {
    await client.send(new sdk.AbortMultipartUploadCommand({ Bucket: plan.bucket, Key: plan.objectKey, UploadId: uploadId }), { abortSignal: AbortSignal.timeout(30_000) });
  } catch (error) {
    plan.logger.warn({ key: plan.objectKey, uploadId, err: (error as Error).message }, 's3 could not abort a multipart upload; removeIncomplete() or a bucket lifecycle rule cleans it up');
  }
}
