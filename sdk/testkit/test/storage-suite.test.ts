import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { describeStorageAdapter, findCheck, makeTempDir, storageAdapterChecks, type StorageSuiteOptions } from '../src/index.js';
import { fixtureStorage, type StorageFlaw } from './fixtures/fixture-storage.js';

const roots = new Map<string, () => Promise<void>>();

/** Suite options for the fixture storage with the given planted flaws; roots sit one level down (see key safety). */
function fixtureOptions(flaws: StorageFlaw[] = [], extra: Partial<StorageSuiteOptions<{ root: string }>> = {}): StorageSuiteOptions<{ root: string }> {
  return {
    definition: fixtureStorage,
    config: async () => {
      const temp = await makeTempDir('holdfast-testkit-storage-');
      const root = join(temp.path, 'root');
      await mkdir(root);
      roots.set(root, temp.remove);
      return { root, flaws };
    },
    badConfig: { root: '/nonexistent/holdfast-testkit', flaws },
    cleanup: async (config) => {
      await roots.get(config.root)?.();
      roots.delete(config.root);
    },
    ...extra,
  };
}

/** Runs one named check of the suite for a flawed fixture and returns its failure message. */
async function failureOf(flaws: StorageFlaw[], checkName: string, extra: Partial<StorageSuiteOptions<{ root: string }>> = {}): Promise<string> {
  const check = findCheck(storageAdapterChecks(fixtureOptions(flaws, extra)), checkName);
  try {
    await check.run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`check "${check.name}" passed for an adapter with ${flaws.join(', ')}`);
}

// The correct fixture passes the whole suite as registered for adapter packages.
describeStorageAdapter('fixture storage (correct)', fixtureOptions());

describe('the storage suite catches broken adapters', () => {
  it('a put that writes in place leaves a partial object', async () => {
    expect(await failureOf(['non-atomic-put'], 'body stream errors midway')).toMatch(/stat\("atomic\/failed.bin"\) resolved; expected an AdapterError with code NOT_FOUND/);
  });

  it('a put that ignores its signal does not reject as aborted', async () => {
    expect(await failureOf(['ignores-abort'], 'signal aborts midway')).toMatch(/an aborted put succeeded|must reject with an abort error/);
  });

  it('a put that buffers the whole body blows the memory budget', async () => {
    const message = await failureOf(['buffers-whole-body'], 'round trip', { largeObjectBytes: 48 * 1024 * 1024, rssBudgetBytes: 24 * 1024 * 1024 });
    expect(message).toMatch(/RSS grew by \d+ MiB during put \(budget 24 MiB\)/);
  });

  it('missing key validation lets keys escape the root', async () => {
    expect(await failureOf(['no-key-validation'], 'rejects keys escaping the root')).toContain('put("../x") succeeded; it must be rejected');
  });

  it('a plain Error for a missing key is not NOT_FOUND', async () => {
    expect(await failureOf(['plain-not-found'], 'NOT_FOUND for get and stat')).toContain('expected an AdapterError with code NOT_FOUND');
  });

  it('an exclusive range end is caught', async () => {
    expect(await failureOf(['exclusive-range-end'], 'inclusive byte ranges')).toContain('end is inclusive');
  });

  it('a throwing check() fails the bad-config check', async () => {
    expect(await failureOf(['throwing-check'], 'never throws')).toContain('check() threw for a bad config');
  });

  it('a delete that fails on a missing key is not idempotent', async () => {
    expect(await failureOf(['throwing-delete'], 'deletes idempotently')).toMatch(/ENOENT/);
  });

  it('a listing that stops after one page is incomplete', async () => {
    expect(await failureOf(['lists-first-page-only'], 'many entries')).toContain('listed 100 of 210 entries');
  });

  it('switches groups off on request and range reads off by capability', () => {
    const names = storageAdapterChecks(fixtureOptions([], { disable: ['streaming', 'key safety'] })).map((check) => check.group);
    expect(names).not.toContain('streaming');
    expect(names).not.toContain('key safety');
    expect(names).toContain('range reads');
    const noRanges = { ...fixtureStorage, capabilities: { ...fixtureStorage.capabilities, rangeReads: false } };
    expect(storageAdapterChecks(fixtureOptions([], { definition: noRanges })).map((check) => check.group)).not.toContain('range reads');
  });

  it('rejects unknown group names in disable', () => {
    expect(() => storageAdapterChecks(fixtureOptions([], { disable: ['streamin' as never] }))).toThrow('unknown storage check groups in disable: streamin');
  });
});
