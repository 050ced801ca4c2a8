import { readFileSync } from 'node:fs';
import { describeAdapterDefinition, describeRetentionStrategy } from '@holdfast/testkit';
import definition, { retentionPresets } from '../src/index.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

describeAdapterDefinition(definition, { packageJson, sampleConfig: { mode: 'gfs', daily: 7, weekly: 4 } });

describeRetentionStrategy('gfs', {
  definition,
  configs: [
    ...retentionPresets.map((preset) => preset.config),
    { mode: 'keep-last', count: 1 },
    { mode: 'keep-last' },
    { mode: 'gfs', hourly: 3, daily: 2, weekly: 2, monthly: 1, yearly: 1 },
    { mode: 'gfs', weekly: 3 },
    { mode: 'gfs', hourly: 0, daily: 0 },
  ],
  invalidConfigs: [
    {},
    { mode: 'keep-some' },
    { mode: 'gfs', daily: -1 },
    { mode: 'gfs', daily: 1.5 },
    { mode: 'gfs', weekly: '4' },
    { mode: 'gfs', dayly: 7 },
    { mode: 'keep-last', count: 0 },
    { mode: 'keep-all', daily: 7 },
  ],
});
