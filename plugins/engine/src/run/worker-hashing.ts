import type { StreamDigests } from '@holdfast/kernel';
import { Transform, type TransformCallback } from 'node:stream';
import { Worker } from 'node:worker_threads';

// Bytes copied into the shared ring and not yet hashed by the worker, at most: the stream waits beyond it, so a slow
// worker slows the backup down instead of holding the stored stream in memory.
export const RING_BYTES = 2 * 1024 * 1024;
// Bytes gathered in the ring before the worker is told about them: one message per chunk would cost more than it
// saves on a stream of small compressed chunks.
const POST_BYTES = 256 * 1024;

// The worker's heap holds a few messages at a time: small generations keep its resident memory small (the server's
// peak RSS goal is 150 MiB).
const WORKER_LIMITS = { maxYoungGenerationSizeMb: 1, maxOldGenerationSizeMb: 16 };

// The worker, as source text (`eval`): it runs the same from the engine's src/ under vitest and from dist/, with no
// file next to the module to find. It hashes the pieces the main thread names, in order, acknowledging each.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const ring = new Uint8Array(workerData.ring);
const sha256 = createHash('sha256');
const md5 = createHash('md5');
parentPort.on('message', (message) => {
  if (message.type === 'hash') {
    for (const [offset, length] of message.pieces) {
      const piece = ring.subarray(offset, offset + length);
      sha256.update(piece);
      md5.update(piece);
    }
    parentPort.postMessage({ type: 'ack', bytes: message.bytes });
  } else if (message.type === 'end') {
    parentPort.postMessage({ type: 'digests', sha256: sha256.digest('hex'), md5: md5.digest('hex') });
  }
});
`;

/**
 * A pass-through that computes the same digests as the kernel's `HashingPassThrough` (SHA-256 and MD5, SPEC's
 * checksums) on a worker thread, so hashing the stored stream runs next to the main thread instead of on it. Chunks
 * are passed on at once and copied into a ring shared with the worker; at most {@link RING_BYTES} are in flight.
 */
export class WorkerHashingPassThrough extends Transform {
  private readonly worker: Worker;
  private readonly ring = new SharedArrayBuffer(RING_BYTES);
  private readonly view = new Uint8Array(this.ring);
  /** Bytes copied into the ring / acknowledged as hashed by the worker, since the start. */
  private written = 0;
  private hashed = 0;
  /** Pieces written and not yet posted: [offset, length] in the ring. */
  private pending: Array<[number, number]> = [];
  private pendingBytes = 0;
  private waitingForRoom: (() => void) | undefined;
  private finished: ((digests: { sha256: string; md5: string }) => void) | undefined;
  private result: StreamDigests | undefined;

  constructor() {
    super();
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { ring: this.ring }, resourceLimits: WORKER_LIMITS });
    this.worker.on('message', (message: { type: 'ack'; bytes: number } | { type: 'digests'; sha256: string; md5: string }) => {
      if (message.type === 'ack') {
        this.hashed += message.bytes;
        const wake = this.waitingForRoom;
        this.waitingForRoom = undefined;
        wake?.();
      } else {
        this.finished?.(message);
      }
    });
    this.worker.on('error', (error) => this.destroy(error));
    this.worker.on('exit', (code) => {
      if (!this.result && !this.destroyed) this.destroy(new Error(`the hashing worker stopped (exit code ${code})`));
    });
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    // Passed on at once: the copy in the ring is what the worker hashes, so the consumer may reuse the chunk.
    this.push(chunk);
    this.copyIn(chunk, 0, callback);
  }

  /** Copies `chunk` from `from` on into the ring, waiting for room as needed, then calls `callback`. */
  private copyIn(chunk: Buffer, from: number, callback: TransformCallback): void {
    let offset = from;
    while (offset < chunk.length) {
      const room = RING_BYTES - (this.written - this.hashed);
      if (room === 0) {
        // Hand over what is gathered, then wait for the worker to free room.
        this.post();
        this.waitingForRoom = () => this.copyIn(chunk, offset, callback);
        return;
      }
      const at = this.written % RING_BYTES;
      const length = Math.min(room, chunk.length - offset, RING_BYTES - at);
      this.view.set(chunk.subarray(offset, offset + length), at);
      this.pending.push([at, length]);
      this.pendingBytes += length;
      this.written += length;
      offset += length;
      if (this.pendingBytes >= POST_BYTES) this.post();
    }
    callback();
  }

  private post(): void {
    if (this.pendingBytes === 0) return;
    this.worker.postMessage({ type: 'hash', pieces: this.pending, bytes: this.pendingBytes });
    this.pending = [];
    this.pendingBytes = 0;
  }

  override _flush(callback: TransformCallback): void {
    this.post();
    this.finished = ({ sha256, md5 }) => {
      this.result = { sha256, md5, bytes: this.written };
      void this.worker.terminate();
      callback();
    };
    this.worker.postMessage({ type: 'end' });
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    void this.worker.terminate();
    callback(error);
  }

  /** The digests; throws when the stream has not finished yet (a truncated stream has no digest). */
  digests(): StreamDigests {
    if (!this.result) throw new Error('digests() called before the stream finished');
    return this.result;
  }
}

/** `HOLDFAST_HASH_WORKER=on` (also `1`, `true`, `yes`): hash the stored stream on a worker thread. Default: off. */
export function hashWorkerEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return ['on', '1', 'true', 'yes'].includes((env.HOLDFAST_HASH_WORKER ?? '').trim().toLowerCase());
}

/** Creates a {@link WorkerHashingPassThrough}. */
export function createWorkerHashingPassThrough(): WorkerHashingPassThrough {
  return new WorkerHashingPassThrough();
}
