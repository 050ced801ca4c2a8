import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { awaitFirstByte, createHashingPassThrough, isAbortError, type DumpHandle } from '@holdfast/sdk';
import type { ConformanceCheck } from '../checks.js';
import { listChildProcesses, waitForNoNewChildren } from '../helpers/processes.js';
import {
  badConnectionConfigOf,
  buildSource,
  dumpOptionsFor,
  sourceCapabilitiesOf,
  withSeededSource,
  type SourceCheckGroup,
  type SourceSuiteOptions,
} from './harness.js';

async function describeProcesses(pids: number[]): Promise<string> {
  const lines = await Promise.all(
    pids.map(async (pid) => `${pid}: ${(await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '?')).replaceAll('\0', ' ').trim()}`),
  );
  return lines.join('; ');
}

/** Fails unless `promise` rejects within `ms`; returns the rejection. */
async function rejectionWithin(promise: Promise<unknown>, ms: number, what: string): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    promise.then(
      () => ({ kind: 'resolved' as const }),
      (error: unknown) => ({ kind: 'rejected' as const, error }),
    ),
    new Promise<{ kind: 'pending' }>((resolve) => {
      timer = setTimeout(() => resolve({ kind: 'pending' }), ms);
    }),
  ]);
  clearTimeout(timer);
  assert.notEqual(outcome.kind, 'resolved', `${what} resolved; it must reject`);
  assert.notEqual(outcome.kind, 'pending', `${what} did not settle within ${ms} ms`);
  return (outcome as { error: unknown }).error;
}

function roundTrip(options: SourceSuiteOptions<unknown>): ConformanceCheck<SourceCheckGroup> {
  return {
    group: 'round trip',
    name: 'seed -> dump -> restore -> verify, with done stats counting the streamed bytes',
    timeoutMs: 180_000,
    run: () =>
      withSeededSource(options, async (source, seeded, useTarget) => {
        const controller = new AbortController();
        const target = await options.restoreTarget(seeded);
        useTarget(target);
        const handle = await source.dump(dumpOptionsFor(options, seeded, controller.signal));
        const counter = createHashingPassThrough();
        try {
          // Dump and restore run at once, streaming; no copy of the dump is kept.
          await Promise.all([
            pipeline(handle.stream, counter),
            source.restore(counter, { target, signal: controller.signal }),
            handle.done,
          ]);
        } catch (error) {
          controller.abort();
          throw error;
        }
        const stats = await handle.done;
        const streamed = counter.digests().bytes;
        assert.ok(streamed > 0, 'the dump stream was empty');
        assert.equal(stats.bytes, streamed, `done reported ${stats.bytes} bytes but the stream carried ${streamed}`);
        assert.ok(Array.isArray(stats.warnings), 'done stats need a warnings array');
        assert.ok(typeof handle.extension === 'string' && handle.extension.startsWith('.'), 'extension must start with "."');
        await options.verify(target, seeded);
      }),
  };
}

function connectFailure(options: SourceSuiteOptions<unknown>): ConformanceCheck<SourceCheckGroup> {
  return {
    group: 'connect failure',
    name: 'a dump that cannot connect fails before its first byte',
    run: async () => {
      const source = buildSource(options, await badConnectionConfigOf(options));
      const controller = new AbortController();
      try {
        let handle: DumpHandle;
        try {
          handle = await source.dump({ databases: [], signal: controller.signal });
        } catch {
          return; // Rejecting dump() itself is the preferred way to fail.
        }
        handle.done.catch(() => undefined);
        handle.stream.on('error', () => undefined);
        const first = await awaitFirstByte(handle.stream).then(
          (what) => what,
          () => 'error' as const,
        );
        assert.notEqual(first, 'data', 'the dump produced bytes although it could not connect');
        assert.notEqual(first, 'end', 'the dump ended as an empty success although it could not connect');
        await rejectionWithin(handle.done, 10_000, 'done of a dump that could not connect');
      } finally {
        controller.abort();
        await source.dispose?.();
      }
    },
  };
}

function abortMidDump(options: SourceSuiteOptions<unknown>): ConformanceCheck<SourceCheckGroup> {
  return {
    group: 'abort',
    name: 'aborting mid-dump rejects with an abort error and leaves no child process',
    run: () =>
      withSeededSource(options, async (source, seeded) => {
        const before = await listChildProcesses();
        const controller = new AbortController();
        const handle = await source.dump(dumpOptionsFor(options, seeded, controller.signal));
        handle.stream.on('error', () => undefined);
        const done = handle.done;
        done.catch(() => undefined);
        assert.equal(await awaitFirstByte(handle.stream), 'data', 'the dump produced no data');
        // The stream is left unread, so a child producer is blocked on backpressure when the abort arrives.
        controller.abort();
        const error = await rejectionWithin(done, 10_000, 'done of an aborted dump');
        assert.ok(isAbortError(error), `an aborted dump must reject with an abort error, got: ${String(error)}`);
        // Still unread: a producer that was not stopped stays blocked on the pipe and shows up here.
        const leftovers = await waitForNoNewChildren(before);
        assert.deepEqual(leftovers, [], `child processes left after the abort: ${await describeProcesses(leftovers)}`);
        handle.stream.resume();
      }),
  };
}

function healthChecks(options: SourceSuiteOptions<unknown>): ConformanceCheck<SourceCheckGroup>[] {
  return [
    {
      group: 'health check',
      name: 'check() is ok for the good config and not ok (never throwing) for a bad one',
      run: async () => {
        await withSeededSource(options, async (source) => {
          const good = await source.check();
          assert.equal(good.ok, true, `check() failed for the good config: ${good.message}`);
        });
        const bad = buildSource(options, await badConnectionConfigOf(options));
        try {
          const result = await bad.check().catch((error: unknown) => assert.fail(`check() threw for a bad config: ${String(error)}`));
          assert.equal(result.ok, false, 'check() reported ok for a config that cannot connect');
          assert.ok(result.message.length > 0, 'a failed check needs a message saying why');
        } finally {
          await bad.dispose?.();
        }
      },
    },
    {
      group: 'discovery',
      name: 'detectVersion() reports a version (and listDatabases() names when declared)',
      run: () =>
        withSeededSource(options, async (source) => {
          const version = await source.detectVersion();
          assert.ok(typeof version.version === 'string' && /\d/.test(version.version), `detectVersion() gave "${version.version}"`);
          if (sourceCapabilitiesOf(options).listDatabases) {
            const names = await source.listDatabases();
            assert.ok(Array.isArray(names) && names.every((name) => typeof name === 'string'), 'listDatabases() must give strings');
            assert.ok(names.length > 0, 'listDatabases() is declared but found nothing next to the seeded data');
          }
        }),
    },
  ];
}

/** The source checks as a list. */
export function sourceChecks(options: SourceSuiteOptions<unknown>): ConformanceCheck<SourceCheckGroup>[] {
  return [roundTrip(options), connectFailure(options), abortMidDump(options), ...healthChecks(options)];
}
