import { readFileSync } from 'node:fs';
import { describeAdapterDefinition, describeStorageAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';
import { basicConfig, digestConfig, freshRoot, removeRoot, webdavServer } from './server.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

describeAdapterDefinition(definition, {
  packageJson,
  sampleConfig: { url: 'https://cloud.example.com/remote.php/dav/files/alice', username: 'alice', password: 'x', root: '/backups' },
});

describeStorageAdapter<Record<string, unknown>>('storage-webdav against Apache mod_dav (basic auth)', {
  definition,
  config: async () => {
    const state = await webdavServer();
    return basicConfig(state, (await freshRoot(state)).root);
  },
  badConfig: async () => ({ ...basicConfig(await webdavServer(), '/'), password: 'wrong-password' }),
  cleanup: async (config) => removeRoot(await webdavServer(), config.root as string),
});

describeStorageAdapter<Record<string, unknown>>('storage-webdav against Apache mod_dav (digest auth)', {
  definition,
  config: async () => {
    const state = await webdavServer();
    return digestConfig(state, (await freshRoot(state)).root);
  },
  badConfig: async () => ({ ...digestConfig(await webdavServer(), '/'), password: 'wrong-password' }),
  cleanup: async (config) => removeRoot(await webdavServer(), config.root as string),
  // The 64 MiB round trip and RSS budget are proven by the basic-auth run; digest changes only the headers.
  largeObjectBytes: 8 * 1024 * 1024,
});
