import { readFileSync } from 'node:fs';
import { describeAdapterDefinition, describeStorageAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';
import { freshRoot, passwordConfig, removeRoot, sshd } from './server.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

describeAdapterDefinition(definition, {
  packageJson,
  sampleConfig: { host: '127.0.0.1', port: 2222, username: 'nobody', password: 'x', root: '/srv/backups' },
});

describeStorageAdapter<Record<string, unknown>>('storage-sftp against OpenSSH sshd', {
  definition,
  config: async () => {
    const state = await sshd();
    return passwordConfig(state, await freshRoot(state));
  },
  badConfig: async () => ({ ...passwordConfig(await sshd(), '/home/sshtest'), password: 'wrong-password' }),
  cleanup: (config) => removeRoot(config.root as string),
});
