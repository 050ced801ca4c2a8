import { once } from 'node:events';
import { PassThrough, Writable } from 'node:stream';

/** One destination of a fan-out: the stream its `put` reads, and the put itself. */
export interface FanOutBranch {
  readonly name: string;
  readonly body: PassThrough;
  /** Settles when the destination committed the object (or failed). */
  readonly done: Promise<unknown>;
  isAlive: boolean;
  error?: unknown;
}

/**
 * Starts a branch: `start(body)` begins the destination's put on a PassThrough that the fan-out feeds. When the put
 * rejects, the branch is dropped and its PassThrough destroyed, so the other destinations go on at their own pace.
 */
export function startBranch(name: string, start: (body: PassThrough) => Promise<unknown>, highWaterMark = 1024 * 1024): FanOutBranch {
  const body = new PassThrough({ highWaterMark });
  // A failed or aborted run destroys the body with its error (FanOut._destroy), possibly before the put has attached
  // anything to it (a local put still opening its temp file): that error event would be uncaught and end the
  // process. The put learns of it anyway, from its signal and from reading a destroyed body.
  body.on('error', () => undefined);
  const branch: FanOutBranch = { name, body, isAlive: true, done: Promise.resolve() };
  const done = Promise.resolve()
    .then(() => start(body))
    .catch((error: unknown) => {
      branch.isAlive = false;
      branch.error = error;
      body.destroy();
      throw error;
    });
  done.catch(() => undefined);
  (branch as { done: Promise<unknown> }).done = done;
  return branch;
}

/**
 * Resolves when the branch can take more (drain) or has been dropped (closed, or its put settled). The listeners are
 * removed as soon as one fires: a long backup waits here tens of thousands of times, and listeners left behind
 * would pile up on the branch stream.
 */
async function writable(branch: FanOutBranch): Promise<void> {
  const cleanup = new AbortController();
  const { signal } = cleanup;
  try {
    await Promise.race([once(branch.body, 'drain', { signal }), once(branch.body, 'close', { signal }), branch.done]);
  } catch {
    // An error event or a failed put drops the branch; the other destinations go on.
  } finally {
    cleanup.abort();
  }
}

/**
 * A Writable that copies every chunk to every live branch and asks for the next chunk only when all of them
 * accepted it (backpressure: the slowest live destination sets the pace, memory stays at a few buffers per branch).
 * A dropped branch never stalls the others. When every branch is gone the fan-out fails, which stops the source.
 */
export class FanOut extends Writable {
  constructor(private readonly branches: readonly FanOutBranch[]) {
    super({ highWaterMark: 64 * 1024 });
  }

  private live(): FanOutBranch[] {
    return this.branches.filter((branch) => branch.isAlive && !branch.body.destroyed);
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    const live = this.live();
    if (live.length === 0) return callback(new Error('every destination failed'));
    const waits: Promise<void>[] = [];
    for (const branch of live) {
      if (!branch.body.write(chunk)) waits.push(writable(branch));
    }
    if (waits.length === 0) return callback();
    Promise.all(waits).then(() => callback(), callback);
  }

  override _final(callback: (error?: Error | null) => void): void {
    const live = this.live();
    if (live.length === 0) return callback(new Error('every destination failed'));
    for (const branch of live) branch.body.end();
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // A failed or aborted run: the puts see their body error and remove whatever they had started.
    if (error) for (const branch of this.branches) if (!branch.body.destroyed) branch.body.destroy(error);
    callback(error);
  }
}
