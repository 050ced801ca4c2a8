import { readFileSync } from 'node:fs';
import { describeAdapterDefinition, describeStorageAdapter } from '@holdfast/testkit';
import definition from '../src/index.js';
import { explicitConfig, freshRoot, implicitConfig, plainConfig, removeRoot, vsftpd } from './server.js';

const packageJson = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as object;

describeAdapterDefinition(definition, {
  packageJson,
  sampleConfig: { host: 'ftp.example.com', username: 'backup', password: 'x', root: '/backups' },
});

describeStorageAdapter<Record<string, unknown>>('storage-ftp against vsftpd over explicit FTPS', {
  definition,
  config: async () => {
    const state = await vsftpd();
    return explicitConfig(state, (await freshRoot(state)).root);
  },
  badConfig: async () => ({ ...(await explicitConfig(await vsftpd(), '/')), password: 'wrong-password' }),
  cleanup: async (config) => removeRoot(await vsftpd(), config.root as string),
});

// The same suite over implicit TLS and plain FTP, with a smaller streamed object: only the transport differs.
describeStorageAdapter<Record<string, unknown>>('storage-ftp against vsftpd over implicit TLS', {
  definition,
  config: async () => {
    const state = await vsftpd();
    return implicitConfig(state, (await freshRoot(state)).root);
  },
  badConfig: async () => ({ ...(await implicitConfig(await vsftpd(), '/')), password: 'wrong-password' }),
  cleanup: async (config) => removeRoot(await vsftpd(), config.root as string),
  largeObjectBytes: 8 * 1024 * 1024,
});

describeStorageAdapter<Record<string, unknown>>('storage-ftp against vsftpd over plain FTP', {
  definition,
  config: async () => {
    const state = await vsftpd();
    return plainConfig(state, (await freshRoot(state)).root);
  },
  badConfig: async () => ({ ...plainConfig(await vsftpd(), '/'), password: 'wrong-password' }),
  cleanup: async (config) => removeRoot(await vsftpd(), config.root as string),
  largeObjectBytes: 8 * 1024 * 1024,
});
