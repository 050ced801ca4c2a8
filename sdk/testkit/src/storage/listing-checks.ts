import assert from 'node:assert/strict';
import type { ConformanceCheck } from '../checks.js';
import { readAll } from '../helpers/hashing.js';
import { listAll, putRandom, getDigest, withStorage, type StorageCheckGroup, type StorageSuiteOptions } from './harness.js';
import { Readable } from 'node:stream';

/** Listing and stat checks. */
export function listingChecks(options: StorageSuiteOptions<unknown>): ConformanceCheck<StorageCheckGroup>[] {
  return [
    {
      group: 'listing',
      name: 'lists nested prefixes by key prefix (a/ lists a/x and a/b/y, not ab/z)',
      run: () =>
        withStorage(options, async (storage) => {
          for (const key of ['a/x', 'a/b/y', 'ab/z']) await putRandom(storage, key, 10, key);
          const underA = (await listAll(storage, 'a/')).map((entry) => entry.key).sort();
          assert.deepEqual(underA, ['a/b/y', 'a/x'], 'list("a/") returned the wrong keys');
          const all = await listAll(storage, '');
          assert.deepEqual(all.map((entry) => entry.key).sort(), ['a/b/y', 'a/x', 'ab/z'], 'list("") must show every key, "/"-separated');
          for (const entry of all) {
            assert.equal(entry.size, 10, `listing size of ${entry.key} is wrong`);
            assert.ok(entry.modifiedAt instanceof Date && !Number.isNaN(entry.modifiedAt.getTime()), 'modifiedAt must be a valid Date');
          }
        }),
    },
    {
      group: 'listing',
      name: 'lists many entries (210) completely',
      timeoutMs: 120_000,
      run: () =>
        withStorage(options, async (storage) => {
          const keys = Array.from({ length: 210 }, (_, index) => `many/${String(index).padStart(3, '0')}.txt`);
          // Eight at a time: enough to be quick, few enough for servers with connection limits.
          for (let start = 0; start < keys.length; start += 8) {
            await Promise.all(keys.slice(start, start + 8).map((key) => storage.put(key, Readable.from([Buffer.from(key)]))));
          }
          const listed = (await listAll(storage, 'many/')).map((entry) => entry.key).sort();
          assert.equal(listed.length, keys.length, `listed ${listed.length} of ${keys.length} entries (paging?)`);
          assert.deepEqual(listed, keys, 'the listing differs from the keys put');
        }),
    },
    {
      group: 'listing',
      name: 'keeps unicode and space keys (dir with space/naïve 東京.bin)',
      run: () =>
        withStorage(options, async (storage) => {
          const key = 'dir with space/naïve 東京.bin';
          const expected = await putRandom(storage, key, 2_000, 'unicode');
          const listed = (await listAll(storage, 'dir with space/')).map((entry) => entry.key);
          assert.deepEqual(listed, [key], 'the listing does not return the unicode key unchanged');
          assert.equal((await getDigest(storage, key)).sha256, expected, 'get of the unicode key returned other bytes');
          assert.equal((await storage.stat(key)).key, key, 'stat must return the key unchanged');
        }),
    },
    {
      group: 'stat',
      name: 'reports key, size and modification time',
      run: () =>
        withStorage(options, async (storage) => {
          const before = Date.now();
          await storage.put('stat/file.txt', Readable.from([Buffer.from('hello holdfast')]));
          const info = await storage.stat('stat/file.txt');
          assert.equal(info.key, 'stat/file.txt', 'stat returned another key');
          assert.equal(info.size, 14, 'stat size is wrong');
          const drift = Math.abs(info.modifiedAt.getTime() - before);
          assert.ok(drift < 24 * 3600_000, `modifiedAt ${info.modifiedAt.toISOString()} is not close to now`);
          assert.equal((await readAll(await storage.get('stat/file.txt'))).toString(), 'hello holdfast');
        }),
    },
  ];
}
