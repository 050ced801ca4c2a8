import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BUSY_UTILIZATION, startYoungCollectionPacer, youngCollectionsFrom, type YoungCollectionRuntime } from '../src/young-collections.js';

const run = promisify(execFile);
const PACER = fileURLToPath(new URL('../dist/young-collections.js', import.meta.url));

/** A runtime whose event-loop utilization the test sets, counting the collections asked of it. */
function scriptedRuntime(utilizations: number[]): YoungCollectionRuntime & { asked: number } {
  const runtime = {
    asked: 0,
    utilizationSinceLastCall: () => utilizations.shift() ?? 0,
    collectYoung: () => {
      runtime.asked += 1;
    },
  };
  return runtime;
}

describe('young collections while busy', () => {
  it('reads HOLDFAST_YOUNG_COLLECTIONS: auto by default, off, and a clear error for anything else', () => {
    expect(youngCollectionsFrom({})).toBe('auto');
    expect(youngCollectionsFrom({ HOLDFAST_YOUNG_COLLECTIONS: ' ' })).toBe('auto');
    expect(youngCollectionsFrom({ HOLDFAST_YOUNG_COLLECTIONS: 'auto' })).toBe('auto');
    expect(youngCollectionsFrom({ HOLDFAST_YOUNG_COLLECTIONS: 'off' })).toBe('off');
    expect(() => youngCollectionsFrom({ HOLDFAST_YOUNG_COLLECTIONS: 'sometimes' })).toThrow(/HOLDFAST_YOUNG_COLLECTIONS must be auto or off, got "sometimes"/);
  });

  it('collects after a busy interval and never after an idle one', () => {
    const runtime = scriptedRuntime([0, 0.01, BUSY_UTILIZATION, 0.6, 0.02, 1]);
    const pacer = startYoungCollectionPacer(runtime, { timer: false });
    for (let check = 0; check < 6; check++) pacer.check();
    expect(runtime.asked).toBe(3);
    expect(pacer.collections).toBe(3);
    pacer.stop();
  });

  it('in a real process: an idle one runs no young collection, a busy one runs them, and the timer lets it exit', async () => {
    // argv[2] = 'busy': allocates short-lived buffers for about 600 ms, like a streaming run; 'idle': only waits.
    const script = `
const { PerformanceObserver, constants } = await import('node:perf_hooks');
const { applyYoungCollections } = await import(process.argv[1]);
const pacer = applyYoungCollections(process.env);
let minors = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) minors += 1;
}).observe({ entryTypes: ['gc'] });
// The start itself (loading this script's imports, the observer) can make the first interval count as busy on a
// loaded machine; the counts are taken over the 600 ms that follow a settled start.
await new Promise((resolve) => setTimeout(resolve, 200));
const before = pacer?.collections ?? 0;
minors = 0;
const until = Date.now() + 600;
if (process.argv[2] === 'busy') {
  await new Promise((resolve) => {
    const tick = () => {
      const spinUntil = Date.now() + 20;
      while (Date.now() < spinUntil) Buffer.allocUnsafeSlow(1024);
      if (Date.now() < until) setTimeout(tick, 5); else resolve();
    };
    tick();
  });
} else {
  await new Promise((resolve) => setTimeout(resolve, 600));
}
await new Promise((resolve) => setTimeout(resolve, 0));
console.log(JSON.stringify({ started: pacer !== undefined, collections: (pacer?.collections ?? 0) - before, minors }));
`;
    const answer = async (mode: string, env: NodeJS.ProcessEnv = {}) => {
      const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, PACER, mode], { env: { ...process.env, ...env }, timeout: 20_000 });
      return JSON.parse(stdout) as { started: boolean; collections: number; minors: number };
    };
    const idle = await answer('idle');
    expect(idle.started).toBe(true);
    // About 30 checks in 600 ms of waiting. On a loaded machine the child can lose its core in the middle of one of
    // its own timer callbacks, and that interval then looks busy (CI counted 1 on 2026-12-01, after the settled
    // start); a pacer that ignored the gate would count about 30, as the busy child does.
    expect(idle.collections).toBeLessThanOrEqual(2);
    const busy = await answer('busy');
    expect(busy.started).toBe(true);
    // About 30 checks of 20 ms in 600 ms of a busy loop; some land between ticks.
    expect(busy.collections).toBeGreaterThanOrEqual(8);
    expect(busy.minors).toBeGreaterThanOrEqual(busy.collections);
    const off = await answer('busy', { HOLDFAST_YOUNG_COLLECTIONS: 'off' });
    expect(off).toMatchObject({ started: false, collections: 0 });
  });
});
