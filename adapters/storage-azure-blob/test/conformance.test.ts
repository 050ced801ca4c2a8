import { readFileSync } from 'node:fs';
import { describeAdapterDefinition, describeStorageAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';
import { azurite, freshContainer, keyConfig, removeContainer } from './server.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;
const MiB = 1024 * 1024;
// Small blocks so the 64 MiB round trip really is 16 blocks uploaded 4 at a time.
const BLOCK_MiB = 4;
const CONCURRENCY = 4;

describeAdapterDefinition(definition, {
  packageJson,
  sampleConfig: { accountName: 'holdfast', accountKey: 'a2V5', container: 'backups' },
});

describeStorageAdapter<Record<string, unknown>>('storage-azure-blob against Azurite', {
  definition,
  config: async () => {
    const state = await azurite();
    const container = await freshContainer(state);
    return keyConfig(state, container.containerName, { prefix: 'holdfast/run', blockSizeMiB: BLOCK_MiB, concurrency: CONCURRENCY });
  },
  badConfig: async () => ({ ...keyConfig(await azurite(), 'holdfast-missing-container'), accountKey: 'd3Jvbmcta2V5' }),
  cleanup: async (config) => removeContainer(await azurite(), config.container as string),
  // uploadStream holds up to `concurrency` blocks in memory by design (README "Memory").
  rssBudgetBytes: 64 * MiB + BLOCK_MiB * CONCURRENCY * MiB,
});
