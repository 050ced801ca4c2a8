import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

// The worker is plain JavaScript evaluated from a string: the same code then runs from `src/` under the test runner
// and from `dist/` in production, with no separate file to locate. It loads the same zstd binding as the main thread
// (an N-API addon that can be loaded in several threads) and compresses each block it is sent into one complete
// frame. It must use a streaming `Compressor` of its own: the binding's one-shot `compress()` shares one static
// zstd context between all threads and crashes when two workers call it at once. After `end()` the context starts a
// new frame, so one compressor per level is reused for every block.
// A `retire` message closes the port: the thread then has nothing left to do and ends by itself, with its zstd
// contexts freed in its own teardown (see ZstdWorkerPool for why threads are never terminated from outside).
// After each frame the thread runs a young-generation collection of its own heap: the binding's output pieces are
// garbage by then, but they are small JS objects over large native buffers, so the worker's young generation almost
// never fills and they piled up (tens of MiB per thread) until V8's external-memory trigger. A scavenge of a
// worker's nearly empty heap takes well under a millisecond; a 512 MiB ZSTD backup's peak RSS fell by about 40 MiB
// at the same speed (docs/benchmarks.md). The `gc` function comes from a fresh context after --expose-gc is set,
// because a worker cannot be started with V8 flags of its own.
export const ZSTD_WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
require('node:v8').setFlagsFromString('--expose-gc');
const collectYoung = (() => {
  const gc = require('node:vm').runInNewContext('gc');
  return typeof gc === 'function' ? () => gc({ type: 'minor' }) : () => undefined;
})();
import(workerData.bindingUrl).then(({ _NapiBindings: zstd }) => {
  const compressors = new Map();
  parentPort.on('message', ({ id, block, length, level, retire }) => {
    if (retire) {
      parentPort.close();
      return;
    }
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
      // The pieces are dropped before the collection, so it frees them now rather than at the next frame.
      pieces.length = 0;
      collectYoung();
    } catch (error) {
      compressors.delete(level);
      parentPort.postMessage({ id, block, error: error && error.message ? error.message : String(error) }, [block.buffer]);
    }
  });
}, (error) => parentPort.postMessage({ loadError: error && error.message ? error.message : String(error) }));
`;

const bindingUrl = pathToFileURL(createRequire(import.meta.url).resolve('@cloudpss/zstd/napi')).href;

interface WorkerReply {
  id?: number;
  frame?: Uint8Array;
  block?: Uint8Array;
  error?: string;
  loadError?: string;
}

/** `block` is the input block handed back for reuse (absent when the worker failed). */
export type FrameCallback = (error: Error | null, frame?: Buffer, block?: Buffer) => void;

interface PendingFrame {
  done: FrameCallback;
  timer: NodeJS.Timeout;
}

interface PooledWorker {
  worker: Worker;
  pending: Map<number, PendingFrame>;
  idleTimer?: NodeJS.Timeout;
  retiring: boolean;
}

/** Options of {@link ZstdWorkerPool}; the defaults are the production values. */
export interface ZstdWorkerPoolOptions {
  /** A thread with no frame for this long ends itself (its zstd contexts are freed). */
  idleMs?: number;
  /** A frame not back after this long fails its stream, and its thread is abandoned. */
  frameTimeoutMs?: number;
  /** The worker's code (tests replace it to simulate a thread that never answers). */
  workerSource?: string;
}

/** A level-3 frame of 2 MiB takes milliseconds and a level-19 one a few seconds; minutes means the thread is stuck. */
export const ZSTD_FRAME_TIMEOUT_MS = 5 * 60_000;
export const ZSTD_IDLE_MS = 30_000;

/**
 * One set of worker threads for the whole process, each turning one block into one zstd frame. Threads are started
 * when a stream needs them (up to the `threads` it asks for), reused by every later stream, and end by themselves
 * after a quiet period.
 *
 * Threads are never terminated from outside. `Worker.terminate()` on a thread that is still loading the N-API
 * binding aborts the whole process (`FATAL ERROR: Error::ThrowAsJavaScriptException napi_throw`): a pool per stream
 * used to do exactly that whenever a backup ended before its spare threads had loaded (any backup smaller than
 * `threads` frames), about once in fifty short streams on a loaded machine. A retiring thread is asked to close its
 * port instead, and does so between frames.
 *
 * While a thread has frames out it is ref'd (the process waits for them); idle threads are unref'd, so a CLI that
 * has finished its backup exits without waiting for the quiet period.
 */
export class ZstdWorkerPool {
  private readonly workers: PooledWorker[] = [];
  private nextId = 0;
  private readonly idleMs: number;
  private readonly frameTimeoutMs: number;
  private readonly workerSource: string;
  /** Threads started over the pool's life (tests check that threads are reused). */
  started = 0;

  constructor(options: ZstdWorkerPoolOptions = {}) {
    this.idleMs = options.idleMs ?? ZSTD_IDLE_MS;
    this.frameTimeoutMs = options.frameTimeoutMs ?? ZSTD_FRAME_TIMEOUT_MS;
    this.workerSource = options.workerSource ?? ZSTD_WORKER_SOURCE;
  }

  /** Live threads. */
  get size(): number {
    return this.workers.length;
  }

  /**
   * Compresses the first `length` bytes of `block` into one frame, on the least busy thread; a new thread is started
   * while fewer than `threads` exist and all are busy. The block must own its whole ArrayBuffer
   * (`Buffer.allocUnsafeSlow`): its memory is moved to the worker and comes back with the frame, so the caller can
   * reuse it instead of allocating a new block each time.
   */
  compress(block: Buffer, length: number, level: number, threads: number, done: FrameCallback): void {
    const target = this.pickWorker(threads);
    const id = this.nextId++;
    const timer = setTimeout(() => this.abandon(target, new Error(`zstd compression worker returned no frame within ${this.frameTimeoutMs / 1000} s; its thread was abandoned`)), this.frameTimeoutMs);
    timer.unref();
    target.pending.set(id, { done, timer });
    if (target.idleTimer) clearTimeout(target.idleTimer);
    target.idleTimer = undefined;
    target.worker.ref();
    target.worker.postMessage({ id, block, length, level }, [block.buffer as ArrayBuffer]);
  }

  private pickWorker(threads: number): PooledWorker {
    let best: PooledWorker | undefined;
    for (const candidate of this.workers.slice(0, threads)) {
      if (!best || candidate.pending.size < best.pending.size) best = candidate;
    }
    if (best && (best.pending.size === 0 || this.workers.length >= threads)) return best;
    return this.startWorker();
  }

  private startWorker(): PooledWorker {
    const worker = new Worker(this.workerSource, { eval: true, workerData: { bindingUrl } });
    const pooled: PooledWorker = { worker, pending: new Map(), retiring: false };
    this.started++;
    worker.on('message', (reply: WorkerReply) => this.onReply(pooled, reply));
    worker.on('error', (error) => this.abandon(pooled, error));
    worker.on('exit', (code) => {
      if (!pooled.retiring) this.abandon(pooled, new Error(`zstd compression worker stopped unexpectedly (exit code ${code})`));
    });
    this.workers.push(pooled);
    return pooled;
  }

  private onReply(pooled: PooledWorker, reply: WorkerReply): void {
    if (reply.loadError !== undefined) {
      this.abandon(pooled, new Error(`zstd compression worker could not load the zstd binding: ${reply.loadError}`));
      return;
    }
    const pending = pooled.pending.get(reply.id!);
    if (!pending) return;
    pooled.pending.delete(reply.id!);
    clearTimeout(pending.timer);
    if (pooled.pending.size === 0) this.becomeIdle(pooled);
    const block = reply.block ? Buffer.from(reply.block.buffer, reply.block.byteOffset, reply.block.byteLength) : undefined;
    if (reply.error !== undefined) pending.done(new Error(`zstd compression failed: ${reply.error}`), undefined, block);
    else pending.done(null, Buffer.from(reply.frame!.buffer, reply.frame!.byteOffset, reply.frame!.byteLength), block);
  }

  private becomeIdle(pooled: PooledWorker): void {
    pooled.worker.unref();
    pooled.idleTimer = setTimeout(() => {
      if (pooled.pending.size > 0) return;
      this.remove(pooled);
      pooled.retiring = true;
      pooled.worker.postMessage({ retire: true });
    }, this.idleMs);
    pooled.idleTimer.unref();
  }

  /** Takes a failed or stuck thread out of the pool and fails its frames. The thread itself is left to end (or not). */
  private abandon(pooled: PooledWorker, error: Error): void {
    if (pooled.retiring) return;
    pooled.retiring = true;
    this.remove(pooled);
    pooled.worker.unref();
    if (pooled.idleTimer) clearTimeout(pooled.idleTimer);
    const frames = [...pooled.pending.values()];
    pooled.pending.clear();
    for (const frame of frames) {
      clearTimeout(frame.timer);
      frame.done(error);
    }
  }

  private remove(pooled: PooledWorker): void {
    const index = this.workers.indexOf(pooled);
    if (index !== -1) this.workers.splice(index, 1);
  }
}

let shared: ZstdWorkerPool | undefined;

/** The process's pool, started on first use. */
export function sharedZstdPool(): ZstdWorkerPool {
  shared ??= new ZstdWorkerPool();
  return shared;
}
