import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  describeSourceAdapter,
  findCheck,
  listChildProcesses,
  sourceAdapterChecks,
  type SourceSuiteOptions,
} from '../src/index.js';
import { seedDirectory, treeDigest, type DirectorySeed } from './fixtures/directory-seed.js';
import { tarDirectorySource, type SourceFlaw } from './fixtures/tar-directory-source.js';

function fixtureOptions(flaws: SourceFlaw[] = []): SourceSuiteOptions<DirectorySeed> {
  return {
    definition: tarDirectorySource,
    seed: seedDirectory,
    config: (seeded) => ({ root: seeded.root, flaws }),
    badConnectionConfig: { root: '/nonexistent/holdfast-testkit-source', flaws },
    restoreTarget: async (seeded) => {
      const path = join(seeded.temp.path, 'restored');
      await mkdir(path);
      return { path };
    },
    verify: async (restored, seeded) => {
      const original = await treeDigest(seeded.root);
      expect(Object.keys(original)).toHaveLength(3);
      expect(await treeDigest(restored.path ?? '')).toEqual(original);
    },
    cleanup: (seeded) => seeded.temp.remove(),
  };
}

async function failureOf(flaws: SourceFlaw[], checkName: string): Promise<string> {
  const check = findCheck(sourceAdapterChecks(fixtureOptions(flaws)), checkName);
  try {
    await check.run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`check "${check.name}" passed for a source with ${flaws.join(', ')}`);
}

describeSourceAdapter('tar fixture source (correct)', fixtureOptions());

describe('the source suite catches broken sources', () => {
  const before = listChildProcesses();
  afterEach(async () => {
    // The orphaning fixture leaves a blocked tar behind on purpose; end it here.
    const known = await before;
    for (const pid of await listChildProcesses()) if (!known.includes(pid)) process.kill(pid, 'SIGKILL');
  });

  it('an abort that leaves tar running', async () => {
    expect(await failureOf(['orphans-child-on-abort'], 'aborting mid-dump')).toMatch(/child processes left after the abort: \d+: tar -c/);
  });

  it('done stats that miscount the streamed bytes', async () => {
    expect(await failureOf(['wrong-byte-count'], 'round trip')).toMatch(/done reported (\d+) bytes but the stream carried \d+/);
  });

  it('an empty dump instead of a connect failure', async () => {
    expect(await failureOf(['empty-dump-on-connect-failure'], 'cannot connect')).toContain('ended as an empty success');
  });

  it('a check() that throws', async () => {
    expect(await failureOf(['throwing-check'], 'check() is ok')).toContain('check exploded');
  });

  it('a verify hook that finds a difference fails the round trip', async () => {
    const options = fixtureOptions();
    const check = findCheck(sourceAdapterChecks({ ...options, verify: async () => expect(1).toBe(2) }), 'round trip');
    await expect(check.run()).rejects.toThrow('expected 1 to be 2');
  });
});
