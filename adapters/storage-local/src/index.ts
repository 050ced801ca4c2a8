import { defineStorageAdapter } from '@holdfast/sdk';
import { localStorageConfig } from './config.js';
import { LocalStorage } from './local-storage.js';

export { localStorageConfig, type LocalStorageConfig } from './config.js';
export { LocalStorage } from './local-storage.js';

/** The `storage-local` adapter: a directory on this machine (or a mounted share). */
export default defineStorageAdapter({
  id: 'local',
  displayName: 'Local directory',
  description: 'Stores backups in a directory on the server (or a mounted drive), with atomic writes and range reads.',
  configSchema: localStorageConfig,
  capabilities: {
    rangeReads: true,
    serverChecksum: false,
    parallelMetadataReads: true,
    symlinks: true,
    maxParallelParts: 1,
    serverDiskOnly: true,
  },
  implementation: LocalStorage,
});
