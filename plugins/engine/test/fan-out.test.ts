import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, expect, it } from 'vitest';
import { FanOut, startBranch } from '../src/index.js';

/** A consumer that reads slowly and records the largest amount the fan-out got ahead of it. */
function slowSink(delayMs: number) {
  let received = 0;
  const sink = new Writable({
    highWaterMark: 16 * 1024,
    write(chunk: Buffer, _encoding, callback) {
      received += chunk.length;
      setTimeout(callback, delayMs);
    },
  });
  return { sink, received: () => received };
}

function source(chunks: number, size: number, onRead?: (produced: number) => void): Readable {
  let produced = 0;
  return Readable.from(
    (function* generate() {
      for (let i = 0; i < chunks; i++) {
        produced += size;
        onRead?.(produced);
        yield Buffer.alloc(size, i % 256);
      }
    })(),
  );
}

describe('FanOut', () => {
  it('delivers every byte to every destination and is paced by the slowest one', async () => {
    const fast = slowSink(0);
    const slow = slowSink(2);
    let maxLead = 0;
    const branches = [
      startBranch('fast', (body) => pipeline(body, fast.sink)),
      startBranch('slow', (body) => pipeline(body, slow.sink), 64 * 1024),
    ];
    await pipeline(source(200, 16 * 1024, (produced) => (maxLead = Math.max(maxLead, produced - slow.received()))), new FanOut(branches));
    await Promise.all(branches.map((branch) => branch.done));
    expect(fast.received()).toBe(200 * 16 * 1024);
    expect(slow.received()).toBe(200 * 16 * 1024);
    // Bounded by the buffers in between (a few hundred KiB), never the 3.2 MiB total.
    expect(maxLead).toBeLessThan(1024 * 1024);
  });

  it('drops a destination that fails mid-stream without stalling the others', async () => {
    const good = slowSink(0);
    const branches = [
      startBranch('good', (body) => pipeline(body, good.sink)),
      startBranch('broken', async (body) => {
        let seen = 0;
        for await (const chunk of body) {
          seen += (chunk as Buffer).length;
          if (seen > 100_000) throw new Error('disk full');
        }
      }),
    ];
    await pipeline(source(100, 16 * 1024), new FanOut(branches));
    await expect(branches[1]!.done).rejects.toThrow('disk full');
    await branches[0]!.done;
    expect(branches[1]!.isAlive).toBe(false);
    expect(good.received()).toBe(100 * 16 * 1024);
  });

  it('fails the stream when every destination failed, so the source stops', async () => {
    const branches = [startBranch('a', async () => Promise.reject(new Error('refused'))), startBranch('b', async () => Promise.reject(new Error('refused')))];
    await Promise.allSettled(branches.map((branch) => branch.done));
    await expect(pipeline(source(10, 1024), new FanOut(branches))).rejects.toThrow('every destination failed');
  });

  it('leaves no listeners behind on a branch after many backpressured writes', async () => {
    const slow = slowSink(0);
    const branch = startBranch('slow', (body) => pipeline(body, slow.sink), 1024);
    const warnings: string[] = [];
    const onWarning = (warning: Error) => void warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      await pipeline(source(3000, 4096), new FanOut([branch]));
      await branch.done;
    } finally {
      process.off('warning', onWarning);
    }
    expect(slow.received()).toBe(3000 * 4096);
    for (const event of ['drain', 'close']) expect(branch.body.listenerCount(event)).toBeLessThanOrEqual(3);
    // Plus the branch's own permanent error listener (see startBranch).
    expect(branch.body.listenerCount('error')).toBeLessThanOrEqual(4);
    expect(warnings).not.toContain('MaxListenersExceededWarning');
  });

  it('a run aborted before a put reads its body fails that put, without an uncaught error', async () => {
    // Regression (seen in CI under load): the Stuck Job Timeout aborted a run while the local put still awaited its
    // temp file's open; the fan-out destroyed the branch body with the abort error before the put had attached its
    // pipeline, and the error on the unlistened PassThrough ended up as an uncaught exception.
    const uncaught: unknown[] = [];
    const onUncaught = (error: unknown) => uncaught.push(error);
    process.on('uncaughtException', onUncaught);
    try {
      const controller = new AbortController();
      const branch = startBranch('late', async (body) => {
        await new Promise((resolve) => setTimeout(resolve, 50));
        await pipeline(body, slowSink(0).sink, { signal: controller.signal });
      });
      // A stalled source (nothing written yet), as in a run the Stuck Job Timeout cancels.
      const stalled = new Readable({ read() {} });
      const run = pipeline(stalled, new FanOut([branch]), { signal: controller.signal });
      setTimeout(() => controller.abort(new Error('stuck')), 10);
      await expect(run).rejects.toThrow();
      await expect(branch.done).rejects.toThrow();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(uncaught).toEqual([]);
      expect(branch.body.destroyed).toBe(true);
    } finally {
      process.off('uncaughtException', onUncaught);
    }
  });
});
