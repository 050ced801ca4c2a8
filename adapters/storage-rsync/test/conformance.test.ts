import { readFileSync } from 'node:fs';
import { describeAdapterDefinition, describeStorageAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';
import { daemonConfig, removeFolder, rsyncd, sshConfig, sshd } from './server.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

describeAdapterDefinition(definition, {
  packageJson,
  sampleConfig: { mode: 'ssh', host: '127.0.0.1', username: 'backup', password: 'x', root: '/srv/backups' },
});

describeStorageAdapter<Record<string, unknown>>('storage-rsync over SSH (OpenSSH sshd + rsync)', {
  definition,
  config: async () => sshConfig(await sshd()),
  badConfig: async () => {
    const state = await sshd();
    return { mode: 'ssh', host: state.host, port: state.port, username: state.user, password: 'wrong-password', root: state.home };
  },
  cleanup: removeFolder,
});

describeStorageAdapter<Record<string, unknown>>('storage-rsync on an rsync daemon module', {
  definition,
  config: async () => daemonConfig(await rsyncd()),
  badConfig: async () => {
    const state = await rsyncd();
    return { mode: 'daemon', host: state.host, port: state.port, module: state.module, username: state.user, password: 'wrong-password' };
  },
  cleanup: removeFolder,
});
