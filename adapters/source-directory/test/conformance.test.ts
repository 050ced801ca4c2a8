import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { expect } from 'vitest';
import { describeAdapterDefinition, describeSourceAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';
import { describeTree, removeAll, seedTree, tempDir } from './tree.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

describeAdapterDefinition(definition, { packageJson, sampleConfig: { paths: ['/srv/data'] } });

interface Seeded {
  tree: string;
  target?: string;
}

describeSourceAdapter<Seeded, Record<string, unknown>>('source-directory on a seeded temp tree', {
  definition,
  seed: async () => {
    const tree = await tempDir('seed');
    await seedTree(tree);
    return { tree };
  },
  config: (seeded) => ({ paths: [seeded.tree] }),
  badConnectionConfig: { paths: ['/nonexistent/holdfast-directory-source-test'] },
  restoreTarget: async (seeded) => {
    seeded.target = await tempDir('restore');
    return { path: seeded.target };
  },
  verify: async (restored, seeded) => {
    const expected = await describeTree(seeded.tree);
    const actual = await describeTree(join(restored.path!, `0-${basename(seeded.tree)}`));
    expect(actual).toEqual(expected);
    expect(Object.keys(actual)).toContain('naïve/東京.txt');
  },
  cleanup: (seeded) => removeAll(seeded.tree, seeded.target),
});
