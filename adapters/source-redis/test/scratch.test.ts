// The scratch capability (test restores) against the local Redis: key figures, a dump restored into the reserved
// scratch index with the same figures, and the owner key written, read and flushed with the index.
import { describeSourceScratch } from '@holdfast/testkit';
import definition from '../src/index.js';
import { flush, server, withDb } from './helpers.js';

// Index 3 is seeded, 4 is the scratch index: this file's own (see helpers.ts). It shared 12 and 13 with
// redis-source.test.ts once, and the two files, running side by side, saw each other's keys.
const SEEDED = 3;
const SCRATCH = 4;

describeSourceScratch<number, Record<string, unknown>>('source-redis against the local Redis', {
  definition,
  seed: async () => {
    await flush(SEEDED, SCRATCH);
    await withDb(SEEDED, async (redis) => {
      for (let i = 0; i < 40; i++) await redis.set(`plain:${i}`, `value ${i}`);
      // Expiries far enough away that none passes during the test.
      for (let i = 0; i < 7; i++) await redis.set(`expiring:${i}`, `value ${i}`, 'EX', 3600);
      await redis.hset('hash', { a: '1', b: '2' });
    });
    return SEEDED;
  },
  config: (db) => ({ ...server, database: db, mode: 'logical' }),
  database: (db) => String(db),
  expectedFigures: () => ({ keys: 48, expires: 7 }),
  scratchName: () => String(SCRATCH),
  cleanup: () => flush(SEEDED, SCRATCH),
});
