import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { DEFAULT_HEAP_GROWING_PERCENT, heapGrowingPercentFrom } from '../src/heap-settings.js';

const run = promisify(execFile);
const SETTINGS = fileURLToPath(new URL('../dist/heap-settings.js', import.meta.url));

// Keeps a slowly growing live set while making ten times as much garbage, like a restore of many small files, and
// prints the largest heap V8 committed along the way.
const WORKLOAD = `
const { applyServerHeapSettings } = await import(process.argv[1]);
applyServerHeapSettings(process.env);
const kept = [];
let largest = 0;
for (let round = 0; round < 300; round += 1) {
  const garbage = [];
  for (let item = 0; item < 20000; item += 1) garbage.push({ name: 'entry-' + item, size: item });
  if (round % 3 === 0) kept.push(garbage.slice(0, 2000));
  largest = Math.max(largest, process.memoryUsage().heapTotal);
}
process.stdout.write(String(largest));
`;

async function largestHeap(env: NodeJS.ProcessEnv): Promise<number> {
  const { stdout } = await run(process.execPath, ['--max-semi-space-size=2', '--input-type=module', '-e', WORKLOAD, SETTINGS], { env: { PATH: process.env.PATH, ...env } });
  return Number(stdout);
}

describe('V8 heap growth of the server process', () => {
  it('defaults to 20 % and accepts integers from 0 to 400', () => {
    expect(heapGrowingPercentFrom({})).toBe(DEFAULT_HEAP_GROWING_PERCENT);
    expect(DEFAULT_HEAP_GROWING_PERCENT).toBe(20);
    expect(heapGrowingPercentFrom({ HOLDFAST_HEAP_GROWING_PERCENT: '' })).toBe(20);
    expect(heapGrowingPercentFrom({ HOLDFAST_HEAP_GROWING_PERCENT: '0' })).toBe(0);
    expect(heapGrowingPercentFrom({ HOLDFAST_HEAP_GROWING_PERCENT: '50' })).toBe(50);
    expect(heapGrowingPercentFrom({ HOLDFAST_HEAP_GROWING_PERCENT: '400' })).toBe(400);
  });

  it.each(['-1', '1.5', '401', 'lots', '20%', '0x10'])('rejects %j with a message naming the variable', (value) => {
    expect(() => heapGrowingPercentFrom({ HOLDFAST_HEAP_GROWING_PERCENT: value })).toThrow(
      `HOLDFAST_HEAP_GROWING_PERCENT must be an integer from 0 to 400 (0: V8's own heap growth), got "${value}"`,
    );
  });

  it('keeps the heap of a garbage-heavy process well below what V8 grows it to on its own', async () => {
    if (!existsSync(SETTINGS)) throw new Error(`${SETTINGS} is missing: build first (npm test does)`);
    const own = await largestHeap({ HOLDFAST_HEAP_GROWING_PERCENT: '0' });
    const server = await largestHeap({});
    // Measured 71.6 MiB against 34.7: the bound leaves room for V8's own variation, not for the setting having no effect.
    expect(server).toBeLessThan(own * 0.75);
  });
});
