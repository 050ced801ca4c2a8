import assert from 'node:assert/strict';
import type { ConformanceCheck } from '../checks.js';
import { readAll } from '../helpers/hashing.js';
import { deterministicStream } from '../helpers/random-stream.js';
import { startRssSampler } from '../helpers/rss.js';
import { sha256OfStream } from '../helpers/hashing.js';
import {
  expectedSha256,
  getDigest,
  listAll,
  putRandom,
  withStorage,
  type StorageCheckGroup,
  type StorageSuiteOptions,
} from './harness.js';

const MiB = 1024 * 1024;

/** Streamed round trip, range reads, concurrency and overwrite. */
export function dataChecks(options: StorageSuiteOptions<unknown>): ConformanceCheck<StorageCheckGroup>[] {
  const largeBytes = options.largeObjectBytes ?? 64 * MiB;
  const rssBudget = options.rssBudgetBytes ?? 64 * MiB;
  return [
    {
      group: 'streaming',
      name: `streams a ${Math.round(largeBytes / MiB)} MiB put/get round trip intact with flat memory`,
      timeoutMs: 180_000,
      run: () =>
        withStorage(options, async (storage) => {
          const key = 'large/round-trip.bin';
          const expected = await expectedSha256(largeBytes, 'large');
          // Warm up first: the first streams of a process grow the heap's young generation by tens of MiB, which
          // is not the adapter buffering the body.
          await putRandom(storage, 'large/warm-up.bin', 4 * MiB, 'warm-up');
          await getDigest(storage, 'large/warm-up.bin');
          await storage.delete('large/warm-up.bin');
          let sampler = startRssSampler();
          const put = await storage.put(key, deterministicStream(largeBytes, { seed: 'large' }), { size: largeBytes });
          const putMemory = sampler.stop();
          assert.equal(put.size, largeBytes, 'put reported a wrong size');
          sampler = startRssSampler();
          const got = await sha256OfStream(await storage.get(key));
          const getMemory = sampler.stop();
          assert.equal(got.bytes, largeBytes, 'get returned a different number of bytes');
          assert.equal(got.sha256, expected, 'get returned different bytes than were put (SHA-256 differs)');
          for (const [phase, report] of [['put', putMemory], ['get', getMemory]] as const) {
            assert.ok(
              report.growth < rssBudget,
              `RSS grew by ${Math.round(report.growth / MiB)} MiB during ${phase} (budget ${Math.round(rssBudget / MiB)} MiB): stream, do not buffer`,
            );
          }
          assert.equal((await storage.stat(key)).size, largeBytes, 'stat size differs from the bytes put');
        }),
    },
    {
      group: 'range reads',
      name: 'reads inclusive byte ranges (start only, start+end, last byte)',
      run: () =>
        withStorage(options, async (storage) => {
          const size = 10_000;
          const content = await readAll(deterministicStream(size, { seed: 'range' }));
          await storage.put('range/object.bin', deterministicStream(size, { seed: 'range' }), { size });
          const read = async (start: number, end?: number) =>
            readAll(await storage.get('range/object.bin', { range: end === undefined ? { start } : { start, end } }));
          assert.ok((await read(1_000)).equals(content.subarray(1_000)), 'range { start: 1000 } returned the wrong bytes');
          assert.ok((await read(10, 19)).equals(content.subarray(10, 20)), 'range { start: 10, end: 19 } must return 10 bytes (end is inclusive)');
          assert.ok((await read(size - 1, size - 1)).equals(content.subarray(size - 1)), 'range of the last byte returned the wrong bytes');
          assert.ok((await read(0, 0)).equals(content.subarray(0, 1)), 'range { start: 0, end: 0 } must return the first byte');
        }),
    },
    {
      group: 'concurrency',
      name: 'lands concurrent puts of different keys intact',
      timeoutMs: 120_000,
      run: () =>
        withStorage(options, async (storage) => {
          const keys = Array.from({ length: 8 }, (_, index) => `parallel/part-${index}.bin`);
          const expected = await Promise.all(keys.map((key, index) => putRandom(storage, key, MiB + index * 4099, key)));
          for (const [index, key] of keys.entries()) {
            const got = await getDigest(storage, key);
            assert.equal(got.sha256, expected[index], `concurrent put of ${key} landed with different bytes`);
          }
          assert.equal((await listAll(storage, 'parallel/')).length, keys.length, 'listing does not show every concurrent put');
        }),
    },
    {
      group: 'overwrite',
      name: 'replaces an object on overwrite, and a failed overwrite keeps the old one',
      run: () =>
        withStorage(options, async (storage) => {
          const key = 'overwrite/object.bin';
          const first = await putRandom(storage, key, 50_000, 'v1');
          const failing = deterministicStream(200_000, { seed: 'v-broken', failAfterBytes: 100_000 });
          await assert.rejects(storage.put(key, failing), 'a put whose body errors must reject');
          assert.equal((await getDigest(storage, key)).sha256, first, 'a failed overwrite damaged the existing object');
          const second = await putRandom(storage, key, 30_000, 'v2');
          const got = await getDigest(storage, key);
          assert.equal(got.sha256, second, 'get after overwrite does not return the new content');
          assert.equal((await storage.stat(key)).size, 30_000, 'stat after overwrite shows the old size');
          const listed = (await listAll(storage, 'overwrite/')).map((entry) => entry.key);
          assert.deepEqual(listed, [key], 'the listing after overwrite must show the key exactly once');
        }),
    },
  ];
}
