import assert from 'node:assert/strict';
import { access, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ScratchDatabaseIndex, ScratchDatabaseServer, SourceAdapter, SourceScratch } from '@holdfast/sdk';
import type { ConformanceCheck } from '../checks.js';
import { declaredPlacement, scratchTarget, withSeededScratch, type ScratchCheckGroup, type ScratchSuiteOptions } from './harness.js';

type Check = ConformanceCheck<ScratchCheckGroup>;

/** Names a scratch of the right kind for this placement and says how to remove what the suite made. */
async function scratchNameFor(options: ScratchSuiteOptions<unknown>, scratch: SourceScratch, seeded: unknown): Promise<{ name: string; remove(): Promise<void> }> {
  const chosen = await options.scratchName?.(seeded);
  if (scratch.placement === 'file') {
    const folder = chosen ? undefined : await mkdtemp(join(tmpdir(), 'holdfast-testkit-scratch-'));
    return { name: chosen ?? join(folder!, 'scratch.db'), remove: async () => {
        if (folder) await rm(folder, { recursive: true, force: true });
      },
    };
  }
  if (scratch.placement === 'index') {
    assert.ok(chosen !== undefined, 'a source with index scratch needs scratchName(): an empty index reserved for the test');
    return { name: chosen, remove: () => scratch.dropDatabase(chosen) };
  }
  const name = chosen ?? `hf_testkit_scratch_${Math.random().toString(36).slice(2, 10)}`;
  return { name, remove: () => scratch.dropDatabase(name) };
}

/** Dumps the seeded database and restores it into `name`, streaming, as a test restore does. */
async function restoreInto(source: SourceAdapter, scratch: SourceScratch, original: string, name: string): Promise<void> {
  const signal = new AbortController().signal;
  const handle = await source.dump({ databases: [original], signal });
  await Promise.all([source.restore(handle.stream, { target: scratchTarget(scratch.placement, original, name), signal }), handle.done]);
}

function declaration(options: ScratchSuiteOptions<unknown>): Check {
  return {
    group: 'declaration',
    name: 'declares capabilities.scratchRestore, and scratch() answers with that placement and what it counts',
    run: async () => {
      const placement = declaredPlacement(options);
      assert.ok(placement === 'database' || placement === 'file' || placement === 'index', `capabilities.scratchRestore must be database, file or index (is ${String(placement)})`);
      await withSeededScratch(options, async (scratch) => {
        assert.equal(scratch.placement, placement, 'scratch().placement differs from the declared capabilities.scratchRestore');
        assert.ok(scratch.counts === 'table-rows' || scratch.counts === 'keys', `scratch().counts must be table-rows or keys (is ${String(scratch.counts)})`);
        if (scratch.placement !== 'file') assert.ok(typeof scratch.server === 'string' && scratch.server.length > 0, 'scratch().server must name the server');
      });
    },
  };
}

function figures(options: ScratchSuiteOptions<unknown>): Check {
  return {
    group: 'figures',
    name: 'figures() of the seeded database are exactly what the seed created',
    timeoutMs: 60_000,
    run: () =>
      withSeededScratch(options, async (scratch, _source, seeded) => {
        assert.deepEqual(await scratch.figures(options.database(seeded)), options.expectedFigures(seeded));
      }),
  };
}

function roundTrip(options: ScratchSuiteOptions<unknown>): Check {
  return {
    group: 'scratch round trip',
    name: 'a dump restored into a scratch has the seeded figures and passes integrityCheck (ok or none)',
    timeoutMs: 180_000,
    run: () =>
      withSeededScratch(options, async (scratch, source, seeded) => {
        const original = options.database(seeded);
        const target = await scratchNameFor(options, scratch, seeded);
        try {
          await restoreInto(source, scratch, original, target.name);
          const restored = await scratch.figures(target.name);
          // An index scratch also holds its owner key once a test restore wrote it; here none was written.
          assert.deepEqual(restored, options.expectedFigures(seeded), `figures of the scratch ${target.name} differ from the seeded database's`);
          const integrity = await scratch.integrityCheck(target.name);
          assert.ok(integrity === null || integrity === 'ok', `integrityCheck(${target.name}) answered ${String(integrity)}`);
        } finally {
          await target.remove();
        }
      }),
  };
}

/** Database placement: a scratch is listed by its prefix, exists, and is gone after dropDatabase (twice is fine). */
async function dropsDatabase(scratch: ScratchDatabaseServer, source: SourceAdapter, original: string, name: string): Promise<void> {
  await restoreInto(source, scratch, original, name);
  assert.equal(await scratch.databaseExists(name), true, `databaseExists(${name}) is false right after restoring into it`);
  assert.ok((await scratch.listDatabases(name.slice(0, -3))).includes(name), `listDatabases(prefix) does not list ${name}`);
  assert.deepEqual(await scratch.listDatabases(`${name}_nothing_starts_so`), [], 'listDatabases(prefix) lists names without that prefix');
  await scratch.dropDatabase(name);
  assert.equal(await scratch.databaseExists(name), false, `databaseExists(${name}) is still true after dropDatabase`);
  await scratch.dropDatabase(name);
}

/** Index placement: the owner round-trips, counts as one key, and dropDatabase empties the index. */
async function emptiesIndex(scratch: ScratchDatabaseIndex, name: string): Promise<void> {
  assert.equal(await scratch.readOwner(name), null, `readOwner(${name}) of an empty index must be null`);
  await scratch.writeOwner(name, 'testkit-owner');
  assert.equal(await scratch.readOwner(name), 'testkit-owner');
  assert.deepEqual(await scratch.figures(name), { keys: 1, expires: 0 }, 'the owner must be one key without expiry');
  await scratch.dropDatabase(name);
  assert.equal(await scratch.readOwner(name), null, 'dropDatabase left the owner behind');
  assert.equal((await scratch.figures(name)).keys, 0, 'dropDatabase left keys behind');
}

function cleanup(options: ScratchSuiteOptions<unknown>): Check {
  return {
    group: 'cleanup',
    name: 'a scratch is found, recognised and removed again (database: list, exists, drop; index: owner, empty)',
    timeoutMs: 180_000,
    run: () =>
      withSeededScratch(options, async (scratch, source, seeded) => {
        const target = await scratchNameFor(options, scratch, seeded);
        try {
          if (scratch.placement === 'database') await dropsDatabase(scratch, source, options.database(seeded), target.name);
          else if (scratch.placement === 'index') await emptiesIndex(scratch, target.name);
          else {
            // File scratch lives in a folder the engine removes; restoring must leave the file where it was asked to.
            await restoreInto(source, scratch, options.database(seeded), target.name);
            await access(target.name);
          }
        } finally {
          await target.remove();
        }
      }),
  };
}

/** Every check of the scratch suite. */
export function scratchChecks(options: ScratchSuiteOptions<unknown>): Check[] {
  return [declaration(options), figures(options), roundTrip(options), cleanup(options)];
}
