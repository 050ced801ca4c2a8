import { readFileSync } from 'node:fs';
import { describeAdapterDefinition, describeStorageAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';
import { useFakeDrive } from './support.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;
const drive = useFakeDrive({ pageSize: 100 });

describeAdapterDefinition(definition, { packageJson, sampleConfig: { folderPath: 'Holdfast' } });

describeStorageAdapter<Record<string, unknown>>('storage-gdrive against a local fake of the Google Drive API', {
  definition,
  config: () => drive.config({ chunkSizeMiB: 8 }),
  // Nothing listens on port 1: the check must fail with a message, not throw.
  badConfig: { folderPath: 'Holdfast', apiBaseUrl: 'http://127.0.0.1:1', tokenUrl: 'http://127.0.0.1:1/token' },
  context: { credentials: { primary: drive.profile() } },
});
