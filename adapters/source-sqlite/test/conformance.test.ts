import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { describeAdapterDefinition, describeSourceAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';
import { contents, createDatabase, removeAll, tempDir } from './helpers.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

describeAdapterDefinition(definition, { packageJson, sampleConfig: { path: '/srv/app/data.sqlite' } });

describeSourceAdapter<{ dir: string; file: string }, Record<string, unknown>>('source-sqlite on a seeded database file', {
  definition,
  seed: async () => {
    const dir = await tempDir('conf');
    const file = join(dir, 'app.sqlite');
    createDatabase(file, 4000);
    return { dir, file };
  },
  config: (seeded) => ({ path: seeded.file }),
  badConnectionConfig: { path: '/nonexistent/holdfast-sqlite-test/app.sqlite' },
  restoreTarget: (seeded) => ({ path: join(seeded.dir, 'restored.sqlite') }),
  verify: async (restored, seeded) => {
    const expected = contents(seeded.file);
    expect(expected.items).toHaveLength(4000);
    expect(contents(restored.path!)).toEqual(expected);
  },
  cleanup: (seeded) => removeAll(seeded.dir),
});
