import { readFileSync } from 'node:fs';
import { describeAdapterDefinition, describeStorageAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';
import { localConfig, removeFolder } from './server.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

describeAdapterDefinition(definition, {
  packageJson,
  sampleConfig: { remote: 'mys3:bucket/holdfast', configFile: '[mys3]\ntype = s3\n', flags: ['--bwlimit=10M'] },
});

describeStorageAdapter<Record<string, unknown>>('storage-rclone on a :local: remote', {
  definition,
  config: localConfig,
  badConfig: { remote: ':local:/nonexistent/holdfast-rclone-missing' },
  cleanup: removeFolder,
});
