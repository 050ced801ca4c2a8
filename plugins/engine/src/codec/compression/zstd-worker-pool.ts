import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

// The worker is plain JavaScript evaluated from a string: the same code then runs from `src/` under the test runner
// and from `dist/` in production, with no separate file to locate. It loads the same zstd binding as the main thread
// (an N-API addon that can be loaded in several threads) and compresses each block it is sent into one complete
// frame. It must use a streaming `Compressor` of its own: the binding's one-shot `compress()` shares one static
// zstd context between all threads and crashes when two workers call it at once. After `end()` the context starts a
// new frame, so one compressor per level is reused for every block.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
import(workerData.bindingUrl).then(({ _NapiBindings: zstd }) => {
  const compressors = new Map();
  parentPort.on('message', ({ id, block, length, level }) => {
    try {
      let compressor = compressors.get(level);
      if (!compressor) compressors.set(level, (compressor = new zstd.Compressor(level)));
      const pieces = [];
      compressor.data(Buffer.from(block.buffer, block.byteOffset, length), (piece) => pieces.push(piece));
      compressor.end((piece) => pieces.push(piece));
      // One buffer of its own, handed over (transferred) with the block: nothing is left behind in this thread
      // for its garbage collector to find late (a worker's heap is small, so it collects rarely, and dead 2 MiB
      // blocks would pile up to tens of MiB per thread).
      const frame = new Uint8Array(pieces.reduce((sum, piece) => sum + piece.length, 0));
      let offset = 0;
      for (const piece of pieces) {
        frame.set(piece, offset);
        offset += piece.length;
      }
      parentPort.postMessage({ id, frame, block }, [frame.buffer, block.buffer]);
    } catch (error) {
      compressors.delete(level);
      parentPort.postMessage({ id, block, error: error && error.message ? error.message : String(error) }, [block.buffer]);
    }
  });
  parentPort.postMessage({ ready: true });
}, (error) => parentPort.postMessage({ loadError: error && error.message ? error.message : String(error) }));
`;

const bindingUrl = pathToFileURL(createRequire(import.meta.url).resolve('@cloudpss/zstd/napi')).href;

interface WorkerReply {
  id?: number;
  frame?: Uint8Array;
  block?: Uint8Array;
  error?: string;
  ready?: boolean;
  loadError?: string;
}

/** `block` is the input block handed back for reuse (absent when the worker died). */
type FrameCallback = (error: Error | null, frame?: Buffer, block?: Buffer) => void;

/**
 * A fixed set of worker threads that each turn one block into one zstd frame. Blocks are handed out round-robin,
 * and every worker answers in the order it was sent work, so a caller that numbers its blocks gets them back in a
 * predictable way; the ordering across workers is the caller's job (see ParallelZstdCompressor).
 */
export class ZstdWorkerPool {
  private readonly workers: Worker[] = [];
  private readonly waiting = new Map<number, FrameCallback>();
  private nextId = 0;
  private failure: Error | null = null;
  private closed = false;

  constructor(threads: number) {
    for (let index = 0; index < threads; index++) {
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { bindingUrl } });
      worker.on('message', (reply: WorkerReply) => this.onReply(reply));
      worker.on('error', (error) => this.fail(error));
      worker.on('exit', (code) => {
        if (!this.closed) this.fail(new Error(`zstd compression worker stopped unexpectedly (exit code ${code})`));
      });
      // Not unref'd: while frames are out, the workers are what the process waits for. The stream closes the pool
      // when it finishes or is destroyed, so a finished backup leaves no thread behind.
      this.workers.push(worker);
    }
  }

  /**
   * Compresses the first `length` bytes of `block` into one frame. The block must own its whole ArrayBuffer
   * (`Buffer.allocUnsafeSlow`): its memory is moved to the worker and comes back with the frame, so the caller can
   * reuse it instead of allocating a new block each time.
   */
  compress(block: Buffer, length: number, level: number, done: FrameCallback): void {
    if (this.failure) {
      done(this.failure);
      return;
    }
    const id = this.nextId++;
    this.waiting.set(id, done);
    const worker = this.workers[id % this.workers.length]!;
    worker.postMessage({ id, block, length, level }, [block.buffer as ArrayBuffer]);
  }

  /** Stops every thread; frames still being compressed are dropped. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }

  private onReply(reply: WorkerReply): void {
    if (reply.ready) return;
    if (reply.loadError !== undefined) {
      this.fail(new Error(`zstd compression worker could not load the zstd binding: ${reply.loadError}`));
      return;
    }
    const done = this.waiting.get(reply.id!);
    if (!done) return;
    this.waiting.delete(reply.id!);
    const block = reply.block ? Buffer.from(reply.block.buffer, reply.block.byteOffset, reply.block.byteLength) : undefined;
    if (reply.error !== undefined) done(new Error(`zstd compression failed: ${reply.error}`), undefined, block);
    else done(null, Buffer.from(reply.frame!.buffer, reply.frame!.byteOffset, reply.frame!.byteLength), block);
  }

  private fail(error: Error): void {
    if (this.failure || this.closed) return;
    this.failure = error;
    const callbacks = [...this.waiting.values()];
    this.waiting.clear();
    callbacks.forEach((done) => done(error));
  }
}
