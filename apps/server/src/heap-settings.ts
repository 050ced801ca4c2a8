import { constants, PerformanceObserver } from 'node:perf_hooks';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';

/**
 * How much V8 lets its heap grow past what its last full collection found alive before it collects again. V8's own
 * factor is 1.8 here (under the 1.5 GiB ceiling `npm start` sets). That is little for the idle server's live set, but a
 * lot once a run holds a large working set: a restore of a 50,000-file seekable archive keeps the snapshot's entries
 * (about 27 MiB beyond the idle server) alive and promotes per-file garbage steadily; its heap grew to 92-100 MiB and the process peaked at
 * 193-222 MiB, with 20 % at 171-174 MiB. A fixed 20 % doubled the CPU of a plain directory restore, though (a full
 * collection every few MiB with nothing beyond the idle live set), and growth in proportion to the live set (about
 * 32 MiB of garbage room) let the seekable backup reach 201 MiB (docs/benchmarks.md, "Adaptive heap growth"). So by default
 * the growth is 20 % while the heap holds a working set of WORKING_SET_BYTES or more beyond the idle server's live set,
 * and V8's own otherwise. The threshold was 8 MiB until Node 24: its V8 reports more in use after a full collection
 * of the same idle live set than Node 20's (see `follow` below), so 8 MiB switched an idle server to 20 % at most
 * collections (25 full collections against V8's own 11 in the idle workload of heap-settings.test.ts). With 16 MiB and
 * the smaller of two readings: Node 24 10-14 against 9-10 own and 22-23 fixed; Node 20 12-13 against 12-13 own and
 * 33-36 fixed. A restore's 27 MiB working set still tightens the growth.
 */
export const WORKING_SET_BYTES = 16 * 1024 * 1024;
/** The growth while a large working set is alive. */
export const TIGHT_GROWING_PERCENT = 20;

/** The heap growth the server runs with: adaptive (the default) or a fixed percentage (0: V8's own). */
export type HeapGrowth = { mode: 'auto' } | { mode: 'fixed'; percent: number };

/**
 * `HOLDFAST_HEAP_GROWING_PERCENT`: unset, empty or `auto` for the adaptive growth, else an integer from 0 to 400 (0
 * leaves V8's own heuristics). Anything else stops startup with a message naming the variable.
 */
export function heapGrowthFrom(env: NodeJS.ProcessEnv): HeapGrowth {
  const raw = env.HOLDFAST_HEAP_GROWING_PERCENT;
  if (raw === undefined || raw.trim() === '' || raw.trim() === 'auto') return { mode: 'auto' };
  const value = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || value > 400) {
    throw new Error(`HOLDFAST_HEAP_GROWING_PERCENT must be auto or an integer from 0 to 400 (0: V8's own heap growth), got "${raw}"`);
  }
  return { mode: 'fixed', percent: value };
}

/** The growth percentage for `liveBytes` alive when the idle server had `idleLiveBytes` alive (0: V8's own factor). */
export function growingPercentFor(liveBytes: number, idleLiveBytes: number): number {
  return liveBytes - idleLiveBytes >= WORKING_SET_BYTES ? TIGHT_GROWING_PERCENT : 0;
}

/** Tells the adaptive growth that the process is ready and idle: the heap in use now is its idle live set (at most). */
export interface HeapGrowthControl {
  growth: HeapGrowth;
  markIdle(): void;
}

/**
 * Applies the heap growth to this process. V8 reads the flag at each full collection, so setting it while running works
 * like passing it on the command line (which NODE_OPTIONS does not allow for this flag). The adaptive mode sets it
 * again after each full collection, from the heap in use just after it. Only the process's main job calls this, never
 * a library or a test runner that embeds the server.
 */
export function applyServerHeapSettings(env: NodeJS.ProcessEnv): HeapGrowthControl {
  const growth = heapGrowthFrom(env);
  if (growth.mode === 'fixed') {
    if (growth.percent > 0) setFlagsFromString(`--heap-growing-percent=${growth.percent}`);
    return { growth, markIdle: () => undefined };
  }
  // Until markIdle, no working set is assumed (startup loads code that stays alive). After it, the smallest heap in
  // use seen after a full collection is the idle live set.
  let idleLive = Infinity;
  let current = 0;
  // Node 24's V8 leaves a varying amount of garbage allocated during marking in use after a full collection (4-50 MiB
  // over a 40 MiB live set in the idle workload of heap-settings.test.ts), so one reading can look like a working set.
  // The smaller of the last two readings is the live set: a real working set shows in both.
  const lastReadings: number[] = [];
  const follow = () => {
    lastReadings.push(getHeapStatistics().used_heap_size);
    if (lastReadings.length > 2) lastReadings.shift();
    const live = Math.min(...lastReadings);
    if (live < idleLive && idleLive !== Infinity) idleLive = live;
    const percent = idleLive === Infinity ? 0 : growingPercentFor(live, idleLive);
    if (percent === current) return;
    current = percent;
    // 0 is V8's own heuristics again.
    setFlagsFromString(`--heap-growing-percent=${percent}`);
  };
  const observer = new PerformanceObserver((list) => {
    // A gc entry's `detail.kind` says which collection ran (Node's perf_hooks; not in this @types/node's entry type).
    const isMajor = (entry: object) => (entry as { detail?: { kind?: number } }).detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR;
    if (list.getEntries().some(isMajor)) follow();
  });
  observer.observe({ entryTypes: ['gc'] });
  return {
    growth,
    markIdle: () => {
      idleLive = Math.min(idleLive, getHeapStatistics().used_heap_size);
    },
  };
}

/** How the growth is logged at startup: `auto` or the percentage. */
export function describeHeapGrowth(growth: HeapGrowth): string | number {
  return growth.mode === 'auto' ? 'auto' : growth.percent;
}
