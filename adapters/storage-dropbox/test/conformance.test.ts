import { readFileSync } from 'node:fs';
import { describeAdapterDefinition, describeStorageAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';
import { useFakeDropbox } from './support.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;
const dropbox = useFakeDropbox();

describeAdapterDefinition(definition, { packageJson, sampleConfig: { root: '/Holdfast' } });

describeStorageAdapter<Record<string, unknown>>('storage-dropbox against a local fake of the Dropbox API', {
  definition,
  config: () => dropbox.config({ chunkSizeMiB: 8 }),
  // Nothing listens on port 1: the check must fail with a message, not throw.
  badConfig: { root: '/Holdfast', apiBaseUrl: 'http://127.0.0.1:1', contentBaseUrl: 'http://127.0.0.1:1', tokenUrl: 'http://127.0.0.1:1/oauth2/token' },
  context: { credentials: { primary: dropbox.profile() } },
});
