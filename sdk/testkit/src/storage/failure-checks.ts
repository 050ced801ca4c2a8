import { createAdapterInstance } from '../helpers/instantiate.js';
import assert from 'node:assert/strict';
import { Readable, Transform } from 'node:stream';
import { isAbortError, isAdapterError, type StorageAdapter } from '@holdfast/sdk';
import type { ConformanceCheck } from '../checks.js';
import { deterministicStream } from '../helpers/random-stream.js';
import {
  assertAdapterErrorCode,
  assertInvisible,
  listAll,
  putRandom,
  withStorage,
  type StorageCheckGroup,
  type StorageSuiteOptions,
} from './harness.js';

/** Keys that try to leave the destination root. */
export const ESCAPING_KEYS = ['../x', '/abs', 'a/../../b', 'a\u0000b'] as const;

/** A pass-through that aborts `controller` once `threshold` bytes went through it. */
function abortAfter(controller: AbortController, threshold: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      seen += chunk.length;
      if (seen >= threshold && !controller.signal.aborted) setImmediate(() => controller.abort());
      callback(null, chunk);
    },
  });
}

async function rejectsFor(promise: Promise<unknown>, what: string): Promise<unknown> {
  try {
    const value = await promise;
    (value as Readable | undefined)?.destroy?.();
  } catch (error) {
    return error;
  }
  assert.fail(`${what} succeeded; it must be rejected`);
}

async function checkBadConfig(options: StorageSuiteOptions<unknown>): Promise<void> {
  const raw = typeof options.badConfig === 'function' ? await (options.badConfig as () => unknown)() : options.badConfig;
  let storage: StorageAdapter;
  try {
    storage = createAdapterInstance(options.definition, raw, options.context) as StorageAdapter;
  } catch (error) {
    assert.fail(`badConfig must pass schema validation (it should point at something that does not work): ${(error as Error).message}`);
  }
  try {
    const result = await storage.check().catch((error: unknown) => assert.fail(`check() threw for a bad config: ${String(error)}`));
    assert.equal(result.ok, false, 'check() reported ok for a bad config');
    assert.ok(typeof result.message === 'string' && result.message.length > 0, 'a failed check needs a message saying why');
  } finally {
    await storage.dispose?.();
  }
}

/** Atomicity, not-found, delete, key safety and health checks. */
export function failureChecks(options: StorageSuiteOptions<unknown>): ConformanceCheck<StorageCheckGroup>[] {
  return [
    {
      group: 'atomic put',
      name: 'leaves no visible object when the body stream errors midway',
      run: () =>
        withStorage(options, async (storage) => {
          const body = deterministicStream(4 * 1024 * 1024, { seed: 'broken', failAfterBytes: 512 * 1024 });
          await rejectsFor(storage.put('atomic/failed.bin', body), 'a put whose body errored');
          await assertInvisible(storage, 'atomic/failed.bin');
        }),
    },
    {
      group: 'atomic put',
      name: 'leaves no visible object when the signal aborts midway, and rejects with an abort error',
      run: () =>
        withStorage(options, async (storage) => {
          const controller = new AbortController();
          const body = deterministicStream(16 * 1024 * 1024, { seed: 'aborted' }).pipe(abortAfter(controller, 512 * 1024));
          const error = await rejectsFor(storage.put('atomic/aborted.bin', body, { signal: controller.signal }), 'an aborted put');
          assert.ok(isAbortError(error), `an aborted put must reject with an abort error (AdapterError ABORTED or AbortError), got: ${String(error)}`);
          await assertInvisible(storage, 'atomic/aborted.bin');
        }),
    },
    {
      group: 'not found',
      name: 'throws AdapterError NOT_FOUND for get and stat of a missing key',
      run: () =>
        withStorage(options, async (storage) => {
          await assertAdapterErrorCode(storage.get('missing/nothing.bin'), 'NOT_FOUND', 'get of a missing key');
          await assertAdapterErrorCode(storage.stat('missing/nothing.bin'), 'NOT_FOUND', 'stat of a missing key');
        }),
    },
    {
      group: 'delete',
      name: 'deletes idempotently',
      run: () =>
        withStorage(options, async (storage) => {
          await putRandom(storage, 'delete/me.bin', 100);
          await putRandom(storage, 'delete/keep.bin', 100);
          await storage.delete('delete/me.bin');
          await assertAdapterErrorCode(storage.stat('delete/me.bin'), 'NOT_FOUND', 'stat after delete');
          await storage.delete('delete/me.bin');
          await storage.delete('delete/never-existed.bin');
          const left = (await listAll(storage, 'delete/')).map((entry) => entry.key);
          assert.deepEqual(left, ['delete/keep.bin'], 'delete removed the wrong objects');
        }),
    },
    {
      group: 'key safety',
      name: `rejects keys escaping the root (${ESCAPING_KEYS.map((key) => JSON.stringify(key)).join(', ')})`,
      run: () =>
        withStorage(options, async (storage) => {
          for (const key of ESCAPING_KEYS) {
            const label = JSON.stringify(key);
            const putError = await rejectsFor(storage.put(key, Readable.from([Buffer.from('escape')])), `put(${label})`);
            assert.ok(isAdapterError(putError), `put(${label}) must throw an AdapterError, got ${String(putError)}`);
            for (const [what, call] of [
              ['get', () => storage.get(key)],
              ['stat', () => storage.stat(key)],
              ['delete', () => storage.delete(key)],
            ] as const) {
              const error = await rejectsFor(call(), `${what}(${label})`);
              assert.ok(isAdapterError(error) && error.code !== 'NOT_FOUND', `${what}(${label}) must be rejected as an invalid key, not looked up`);
            }
          }
          assert.deepEqual(await listAll(storage, ''), [], 'a rejected key still wrote something');
        }),
    },
    {
      group: 'health check',
      name: 'check() is ok for a good config',
      run: () =>
        withStorage(options, async (storage) => {
          const result = await storage.check();
          assert.equal(result.ok, true, `check() failed for the good config: ${result.message}`);
        }),
    },
    {
      group: 'health check',
      name: 'check() reports not ok (never throws) for a bad config',
      run: () => checkBadConfig(options),
    },
  ];
}
