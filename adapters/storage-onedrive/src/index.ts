import { defineStorageAdapter } from '@holdfast/sdk';
import { onedriveStorageConfig } from './config.js';
import { OnedriveStorage } from './onedrive-storage.js';

export { onedriveStorageConfig, type OnedriveStorageConfig } from './config.js';
export { OnedriveStorage } from './onedrive-storage.js';
export { itemPath } from './internal/api.js';

/** The `storage-onedrive` adapter: a folder in OneDrive, over OAuth 2 with an OAUTH credential profile. */
export default defineStorageAdapter({
  id: 'onedrive',
  displayName: 'Microsoft OneDrive',
  description: 'Stores backups in a OneDrive (personal or for Business) folder over Microsoft Graph (OAuth 2 refresh token in an OAUTH credential profile), with upload sessions that become visible only when complete, range reads and paginated listings.',
  configSchema: onedriveStorageConfig,
  capabilities: {
    rangeReads: true,
    // OneDrive's quickXorHash (and SHA-1 on personal drives) is not the SHA-256 Holdfast records: nothing to compare.
    serverChecksum: false,
    parallelMetadataReads: true,
    symlinks: false,
    // An upload session takes its fragments in order.
    maxParallelParts: 1,
  },
  requiredCredentials: ['OAUTH'],
  implementation: OnedriveStorage,
});
