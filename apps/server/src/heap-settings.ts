import { setFlagsFromString } from 'node:v8';

/**
 * How much V8 lets its heap grow past what its last full collection found alive before it collects again, in percent.
 * V8's own factor is 1.8 here (under the 1.5 GiB ceiling `npm start` sets) and up to 4 without it. A restore of a
 * 50,000-file seekable archive keeps about 60 MiB alive (the snapshot's entries and the loaded code) and promotes
 * per-file garbage steadily; with the default factor its heap grew to 92-100 MiB and the process peaked at 193-222 MiB,
 * with 20 % at 171-174 MiB in alternating reruns, at a speed near the run-to-run spread (docs/benchmarks.md, "Heap growing
 * factor"). A streaming backup's heap stays flat, so it should rarely reach the lower limit.
 */
export const DEFAULT_HEAP_GROWING_PERCENT = 20;

/**
 * The growth the server process runs with: `HOLDFAST_HEAP_GROWING_PERCENT` (0 leaves V8's own heuristics) or the
 * default. A value that is not an integer from 0 to 400 stops startup with a message naming it.
 */
export function heapGrowingPercentFrom(env: NodeJS.ProcessEnv): number {
  const raw = env.HOLDFAST_HEAP_GROWING_PERCENT;
  if (raw === undefined || raw.trim() === '') return DEFAULT_HEAP_GROWING_PERCENT;
  const value = Number(raw);
  if (!/^\s*\d+\s*$/.test(raw) || value > 400) {
    throw new Error(`HOLDFAST_HEAP_GROWING_PERCENT must be an integer from 0 to 400 (0: V8's own heap growth), got "${raw}"`);
  }
  return value;
}

/**
 * Applies the heap growth to this process. V8 reads the flag at each full collection, so setting it at startup works
 * like passing it on the command line (which NODE_OPTIONS does not allow for this flag); only the process's main job
 * calls this, never a library or a test runner that embeds the server.
 */
export function applyServerHeapSettings(env: NodeJS.ProcessEnv): number {
  const percent = heapGrowingPercentFrom(env);
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
  return percent;
}
