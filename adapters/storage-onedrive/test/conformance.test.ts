import { readFileSync } from 'node:fs';
import { describeAdapterDefinition, describeStorageAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';
import { storedProfile, useFakeGraph } from './support.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;
const graph = useFakeGraph({ pageSize: 100 });
// Every check builds a new instance that refreshes once; the fake rotates (and revokes) refresh tokens, so the
// suite only passes if each rotated token is written back to the shared profile.
const credentials = storedProfile(graph.profile());

describeAdapterDefinition(definition, { packageJson, sampleConfig: { folderPath: 'Holdfast' } });

describeStorageAdapter<Record<string, unknown>>('storage-onedrive against a local fake of the Microsoft Graph drive API', {
  definition,
  config: () => graph.config({ fragmentSizeKiB: 10_240 }),
  // Nothing listens on port 1: the check must fail with a message, not throw.
  badConfig: { folderPath: 'Holdfast', apiBaseUrl: 'http://127.0.0.1:1/v1.0', authBaseUrl: 'http://127.0.0.1:1' },
  context: credentials.context,
});
