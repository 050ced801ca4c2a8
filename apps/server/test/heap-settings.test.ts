import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { growingPercentFor, heapGrowthFrom, TIGHT_GROWING_PERCENT, WORKING_SET_BYTES } from '../src/heap-settings.js';

const run = promisify(execFile);
const SETTINGS = fileURLToPath(new URL('../dist/heap-settings.js', import.meta.url));
const MiB = 1024 * 1024;

// Builds a live set of about argv[2] MiB, before the process marks itself idle (argv[3] = 'idle': the server's loaded
// code) or after it (a run's working set, like a seekable archive's index), then makes garbage that lives long enough
// to be promoted (like a restore's per-file objects). Prints the largest heap V8 committed and its full collections.
const WORKLOAD = `
const { PerformanceObserver, constants } = await import('node:perf_hooks');
const { applyServerHeapSettings } = await import(process.argv[1]);
const heap = applyServerHeapSettings(process.env);
let majors = 0;
new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) majors += 1;
}).observe({ entryTypes: ['gc'] });
if (process.argv[3] !== 'idle') heap.markIdle();
const live = [];
while (process.memoryUsage().heapUsed < Number(process.argv[2]) * 1024 * 1024) {
  live.push(Array.from({ length: 10000 }, (_, item) => ({ name: 'kept-' + item, size: item })));
}
if (process.argv[3] === 'idle') heap.markIdle();
majors = 0;
let largest = 0;
// Each batch stays alive for the next three (about 1.5 MiB in all), long enough to be promoted, then becomes garbage.
const recent = [];
for (let round = 0; round < 1600; round += 1) {
  const garbage = [];
  for (let item = 0; item < 5000; item += 1) garbage.push({ name: 'entry-' + item, size: item });
  recent.push(garbage);
  if (recent.length > 4) recent.shift();
  await new Promise((resolve) => setImmediate(resolve));
  largest = Math.max(largest, process.memoryUsage().heapTotal);
}
await new Promise((resolve) => setTimeout(resolve, 50));
process.stdout.write(JSON.stringify({ largest, majors, live: live.length }));
`;

async function workload(liveMiB: number, when: 'idle' | 'working set', env: NodeJS.ProcessEnv): Promise<{ largest: number; majors: number }> {
  if (!existsSync(SETTINGS)) throw new Error(`${SETTINGS} is missing: build first (npm test does)`);
  const args = ['--max-semi-space-size=2', '--max-old-space-size=1536', '--input-type=module', '-e', WORKLOAD, SETTINGS, String(liveMiB), when];
  const { stdout } = await run(process.execPath, args, { env: { PATH: process.env.PATH, ...env } });
  return JSON.parse(stdout) as { largest: number; majors: number };
}

describe('V8 heap growth of the server process', () => {
  it('is adaptive by default and accepts auto or an integer from 0 to 400', () => {
    for (const raw of [undefined, '', ' ', 'auto']) expect(heapGrowthFrom({ HOLDFAST_HEAP_GROWING_PERCENT: raw })).toEqual({ mode: 'auto' });
    expect(heapGrowthFrom({ HOLDFAST_HEAP_GROWING_PERCENT: '0' })).toEqual({ mode: 'fixed', percent: 0 });
    expect(heapGrowthFrom({ HOLDFAST_HEAP_GROWING_PERCENT: '50' })).toEqual({ mode: 'fixed', percent: 50 });
    expect(heapGrowthFrom({ HOLDFAST_HEAP_GROWING_PERCENT: '400' })).toEqual({ mode: 'fixed', percent: 400 });
  });

  it.each(['-1', '1.5', '401', 'lots', '20%', '0x10', 'AUTO '])('rejects %j with a message naming the variable', (value) => {
    expect(() => heapGrowthFrom({ HOLDFAST_HEAP_GROWING_PERCENT: value })).toThrow(
      `HOLDFAST_HEAP_GROWING_PERCENT must be auto or an integer from 0 to 400 (0: V8's own heap growth), got "${value}"`,
    );
  });

  it('tightens the growth only while a working set of 16 MiB or more is alive beyond the idle live set', () => {
    expect(WORKING_SET_BYTES).toBe(16 * MiB);
    expect(TIGHT_GROWING_PERCENT).toBe(20);
    expect(growingPercentFor(35 * MiB, 35 * MiB)).toBe(0);
    expect(growingPercentFor(50 * MiB, 35 * MiB)).toBe(0);
    expect(growingPercentFor(51 * MiB, 35 * MiB)).toBe(20);
    expect(growingPercentFor(200 * MiB, 35 * MiB)).toBe(20);
  });

  it('keeps the heap of a large working set well below what V8 grows it to on its own', async () => {
    const own = await workload(100, 'working set', { HOLDFAST_HEAP_GROWING_PERCENT: '0' });
    const adaptive = await workload(100, 'working set', {});
    // 20 % of about 100 MiB alive is about 20 MiB of garbage room, V8's own factor about 80 MiB.
    expect(adaptive.largest).toBeLessThan(own.largest - 20 * MiB);
  });

  it('runs about as many full collections as V8 on its own when nothing beyond the idle live set is alive', async () => {
    const own = await workload(40, 'idle', { HOLDFAST_HEAP_GROWING_PERCENT: '0' });
    const adaptive = await workload(40, 'idle', {});
    const fixed = await workload(40, 'idle', { HOLDFAST_HEAP_GROWING_PERCENT: '20' });
    // A fixed 20 % collects every few MiB of promoted garbage: the case the adaptive growth exists for.
    expect(fixed.majors).toBeGreaterThan(own.majors * 2);
    // The workload keeps a few MiB of recent batches alive, and a full collection leaves some garbage allocated while
    // it marked, so the adaptive growth may switch now and then. Measured on this machine (2026-12-06): Node 20 own 12-13,
    // adaptive 12-13, fixed 33-36; Node 24 own 9-10, adaptive 10-14 (25 with the former single reading over 8 MiB),
    // fixed 22-23.
    // The bound tells the adaptive growth from the fixed one on both.
    expect(adaptive.majors).toBeLessThanOrEqual(own.majors * 1.5 + 2);
  });
});
