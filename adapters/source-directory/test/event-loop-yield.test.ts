import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { directorySource, dumpToBuffer } from './helpers.js';
import { removeAll, tempDir } from './tree.js';

// The walk and the reads of small files are synchronous calls on the main thread; the writer yields to the event loop
// every 2 ms so the server's timers and requests go on during a backup. Without the yields a dump whose reader keeps
// up never gives the timers a turn: the stream's hand-offs are microtasks and next-ticks.
let dir: string;
beforeEach(async () => {
  dir = await tempDir('yield');
});
afterEach(() => removeAll(dir));

describe('source-directory dump of many small files', () => {
  it('lets timers run while it walks and reads synchronously', async () => {
    const root = join(dir, 'tree');
    const content = Buffer.alloc(1024, 0x61);
    for (let folder = 0; folder < 20; folder++) {
      await mkdir(join(root, `d${folder}`), { recursive: true });
      await Promise.all(Array.from({ length: 150 }, (_, index) => writeFile(join(root, `d${folder}`, `f${index}.txt`), content)));
    }
    let ticks = 0;
    const timer = setInterval(() => (ticks += 1), 1);
    const started = performance.now();
    try {
      const { stats } = await dumpToBuffer(directorySource({ paths: [root] }));
      expect(stats.warnings).toEqual([]);
    } finally {
      clearInterval(timer);
    }
    const elapsed = performance.now() - started;
    // 3,000 files take tens of milliseconds; at a yield every 2 ms the timer fires several times. A generous floor:
    // the shared test machine may stall the process, but a dump that never yields lets it fire at most once or twice.
    expect(elapsed).toBeGreaterThan(5);
    expect(ticks).toBeGreaterThanOrEqual(3);
  });
});
