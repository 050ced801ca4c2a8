import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeAdapterDefinition, describeStorageAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

describeAdapterDefinition(definition, { packageJson, sampleConfig: { path: tmpdir() } });

describeStorageAdapter('storage-local', {
  definition,
  config: async () => ({ path: await mkdtemp(join(tmpdir(), 'holdfast-local-')) }),
  badConfig: { path: join(tmpdir(), 'holdfast-local-does-not-exist', 'nowhere') },
  cleanup: (config) => rm(config.path, { recursive: true, force: true }),
});
