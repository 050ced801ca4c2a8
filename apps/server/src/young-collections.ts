import { performance } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Young-generation collections while the process is busy.
 *
 * A backup or restore streams through short-lived objects and Buffers; V8 collects its young generation (2 MiB per
 * semi-space, the server's flag) only when the small JS objects fill it, and the dead Buffers' native memory waits for
 * that or for the external-memory trigger (about 64 MiB of growth, with a full mark of the whole heap). Measured on a
 * 1 GiB directory GZIP backup, alternating runs (docs/benchmarks.md, "Young collections while busy"): a young
 * collection every 50 ms took the CPU from 21.7-27.6 to 17.2-20.2 s and the peak RSS from 153-160 to 146-152 MiB; a
 * PostgreSQL ZSTD backup did not change. Collecting only after some MiB of buffer growth (every 100 ms or so) lost
 * the gain, so the pace is time, and the gate is whether the main thread is busy at all: an idle server runs none.
 * Every 20 ms instead of 50 (docs/benchmarks.md, "Session 12"): a directory restore 2.3 instead of 3.5-4.0 s (not
 * repeated in a later bench run: 3.1-3.9 s), a directory ZSTD backup peaking at 150-151 instead of 161-184 MiB, a
 * PostgreSQL ZSTD backup at 146-150 instead of 152-159; 10 ms gained nothing more. A young collection of this heap
 * takes a fraction of a millisecond.
 */
export const CHECK_EVERY_MS = 20;
/** Share of the last interval the event loop spent working above which the process counts as busy. */
export const BUSY_UTILIZATION = 0.05;

/** `HOLDFAST_YOUNG_COLLECTIONS`: `auto` (unset or empty too) paces them; `off` leaves V8's own timing. */
export function youngCollectionsFrom(env: NodeJS.ProcessEnv): 'auto' | 'off' {
  const raw = (env.HOLDFAST_YOUNG_COLLECTIONS ?? '').trim();
  if (raw === '' || raw === 'auto') return 'auto';
  if (raw === 'off') return 'off';
  throw new Error(`HOLDFAST_YOUNG_COLLECTIONS must be auto or off, got "${env.HOLDFAST_YOUNG_COLLECTIONS}"`);
}

/** What the pacing needs from the runtime: how busy the event loop was since the last check, and a young collection. */
export interface YoungCollectionRuntime {
  /** The event loop's utilization (0..1) since the previous call. */
  utilizationSinceLastCall(): number;
  collectYoung(): void;
}

/**
 * The process's own: `gc` is not exposed to scripts unless V8 was started with --expose-gc; setting the flag now and
 * taking `gc` from a fresh context gives the function without changing how the process is started. Answers undefined
 * where V8 offers no such function.
 */
export function processRuntime(): YoungCollectionRuntime | undefined {
  setFlagsFromString('--expose-gc');
  const gc: unknown = runInNewContext('gc');
  if (typeof gc !== 'function') return undefined;
  let last = performance.eventLoopUtilization();
  return {
    utilizationSinceLastCall: () => {
      const now = performance.eventLoopUtilization();
      const since = performance.eventLoopUtilization(now, last);
      last = now;
      return since.utilization;
    },
    collectYoung: () => {
      (gc as (options: { type: 'minor' }) => void)({ type: 'minor' });
      // The next interval starts after the collection: its own time is not the process's work. Counted, a collection
      // that took over a millisecond (a slow or loaded machine) made the next interval look busy, and an idle process
      // went on collecting every 20 ms (seen in the real-process test: 3 to 8 collections in 600 ms of waiting).
      last = performance.eventLoopUtilization();
    },
  };
}

/** A running pacer: `collections` counts the young collections it started. */
export interface YoungCollectionPacer {
  readonly collections: number;
  /** One check, as the timer runs it (tests call it directly). */
  check(): void;
  stop(): void;
}

/**
 * Checks every CHECK_EVERY_MS whether the event loop was busy (BUSY_UTILIZATION or more of the interval) and runs a
 * young collection when it was. The timer does not keep the process alive.
 */
export function startYoungCollectionPacer(runtime: YoungCollectionRuntime, options: { timer?: boolean } = {}): YoungCollectionPacer {
  let collections = 0;
  const check = () => {
    if (runtime.utilizationSinceLastCall() < BUSY_UTILIZATION) return;
    runtime.collectYoung();
    collections += 1;
  };
  const timer = options.timer === false ? undefined : setInterval(check, CHECK_EVERY_MS);
  timer?.unref();
  return {
    get collections() {
      return collections;
    },
    check,
    stop: () => clearInterval(timer),
  };
}

/**
 * Applies `HOLDFAST_YOUNG_COLLECTIONS` to this process: starts the pacer unless it is `off`. Like the heap growth,
 * only the process's main job calls this (the server's entry point, the benchmark children), never a library or a
 * test runner that embeds the server. Answers the pacer, or undefined when off or unavailable.
 */
export function applyYoungCollections(env: NodeJS.ProcessEnv): YoungCollectionPacer | undefined {
  if (youngCollectionsFrom(env) === 'off') return undefined;
  const runtime = processRuntime();
  return runtime ? startYoungCollectionPacer(runtime) : undefined;
}
