import { readFileSync } from 'node:fs';
import { describeAdapterDefinition, describeStorageAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';
import { freshRoot, removeRoot, samba, smbConfig } from './server.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

describeAdapterDefinition(definition, {
  packageJson,
  sampleConfig: { host: 'nas.example.com', share: 'backups', path: 'holdfast', username: 'backup', password: 'x' },
});

describeStorageAdapter<Record<string, unknown>>('storage-smb against Samba smbd (smbclient)', {
  definition,
  config: async () => {
    const state = await samba();
    return smbConfig(state, (await freshRoot(state)).path);
  },
  badConfig: async () => ({ ...smbConfig(await samba(), ''), password: 'wrong-password' }),
  cleanup: async (config) => removeRoot(await samba(), config.path as string),
});
