import { readFileSync } from 'node:fs';
import { afterAll, expect } from 'vitest';
import { describeAdapterDefinition, describeSourceAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';
import { FakeDockerEngine } from './fake-docker.js';
import { describeFolder, seedVolumeFolder } from './seed.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

describeAdapterDefinition(definition, { packageJson, sampleConfig: { volume: 'app_data' } });

// No Docker Engine can run here: the suite runs against the labelled fake of the Engine API (test/fake-docker.ts).
const fake = await FakeDockerEngine.start();
afterAll(() => fake.stop());

let counter = 0;
interface Seeded {
  volume: string;
}

describeSourceAdapter<Seeded, Record<string, unknown>>('source-volume against a fake Docker Engine API', {
  definition,
  seed: async () => {
    const volume = `seed_${++counter}`;
    await seedVolumeFolder(await fake.addVolume(volume));
    return { volume };
  },
  config: (seeded) => ({ dockerHost: `unix://${fake.socketPath}`, volume: seeded.volume, stopContainers: true }),
  badConnectionConfig: () => ({ dockerHost: `unix://${fake.socketPath}.missing`, volume: 'app_data' }),
  restoreTarget: (seeded) => ({ database: `${seeded.volume}_restored` }),
  verify: async (restored, seeded) => {
    const original = await describeFolder(fake.volumes.get(seeded.volume)!);
    const copy = await describeFolder(fake.volumes.get(restored.database!)!);
    expect(copy).toEqual(original);
    expect(Object.keys(copy)).toContain('conf/deep/naïve 東京.txt');
    // Whatever the check did, no helper container may be left behind.
    expect(fake.helpers()).toEqual([]);
  },
});
