import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlockBlobClient } from '@azure/storage-blob';
import { AdapterError, createByteCounter } from '@holdfast/sdk';
import { AZURE_ORIGIN } from './errors.js';

const MiB = 1024 * 1024;
/** Azure limits: 50,000 committed blocks per blob, 4000 MiB per block. */
export const MAX_BLOCKS = 50_000;
const MAX_BLOCK_MiB = 4000;

/** Blob metadata naming the put that committed the blob. */
const UPLOAD_TAG = 'holdfastupload';

/**
 * An abort during the commit request can come after the service applied it; then the blob exists whole and the put
 * happened. The blob carries this put's id in its metadata exactly in that case.
 */
async function committedAnyway(client: BlockBlobClient, uploadId: string): Promise<boolean> {
  const properties = await client.getProperties().catch(() => undefined);
  return properties?.metadata?.[UPLOAD_TAG] === uploadId;
}

/** What a put needs besides the body. */
export interface UploadPlan {
  blockSizeMiB: number;
  concurrency: number;
  tier?: string;
  size?: number;
  signal?: AbortSignal;
}

/**
 * The block size for an upload: the configured one, grown (in whole MiB) when a known size would need more than
 * 50,000 blocks. A stream of unknown size is limited to blockSize x 50,000 bytes.
 */
export function blockSizeFor(blockSizeMiB: number, size?: number): number {
  const configured = blockSizeMiB * MiB;
  if (size === undefined || size <= configured * MAX_BLOCKS) return configured;
  const needed = Math.ceil(size / MAX_BLOCKS / MiB);
  if (needed > MAX_BLOCK_MiB) {
    throw new AdapterError(AZURE_ORIGIN, 'CONFIG', `an object of ${size} bytes exceeds the block blob limit (50,000 blocks of 4000 MiB)`);
  }
  return needed * MiB;
}

/**
 * Uploads `body` as a block blob: blocks of the planned size are staged `concurrency` at a time and the block list is
 * committed only after the last one, so a failed or aborted upload never shows a blob (its staged blocks stay
 * uncommitted and the service discards them after 7 days). Memory is bounded by blockSize x concurrency.
 * Resolves the number of bytes stored.
 */
export async function uploadBlockBlob(client: BlockBlobClient, body: Readable, plan: UploadPlan): Promise<number> {
  plan.signal?.throwIfAborted();
  const blockSize = blockSizeFor(plan.blockSizeMiB, plan.size);
  const counter = createByteCounter();
  const uploadId = randomBytes(8).toString('hex');
  // The pipeline destroys `counter` with the body's error or an AbortError; the SDK's block scheduler listens for
  // 'error' on its input and stops, so no commit follows. (It passes no abort signal to staging requests itself.)
  const feeding = pipeline(body, counter, { signal: plan.signal });
  feeding.catch(() => undefined);
  try {
    // The SDK passes abortSignal to the commit; the metadata tag tells, after an abort, whether that commit landed.
    await client.uploadStream(counter, blockSize, plan.concurrency, {
      abortSignal: plan.signal,
      tier: plan.tier,
      blobHTTPHeaders: { blobContentType: 'application/octet-stream' },
      metadata: { [UPLOAD_TAG]: uploadId },
    });
    await feeding;
    return counter.bytes;
  } catch (error) {
    const fed = await feeding.then(
      () => undefined,
      (feedError: unknown) => feedError,
    );
    body.destroy();
    counter.destroy();
    if (fed === undefined && plan.signal?.aborted && (await committedAnyway(client, uploadId))) return counter.bytes;
    throw fed ?? error;
  }
}
