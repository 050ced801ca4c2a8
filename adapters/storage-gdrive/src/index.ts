import { defineStorageAdapter } from '@holdfast/sdk';
import { gdriveStorageConfig } from './config.js';
import { GdriveStorage } from './gdrive-storage.js';

export { gdriveStorageConfig, type GdriveStorageConfig } from './config.js';
export { GdriveStorage } from './gdrive-storage.js';
export { literal as driveQueryLiteral } from './internal/query.js';

/** The `storage-gdrive` adapter: a folder in Google Drive, over OAuth 2 with an OAUTH credential profile. */
export default defineStorageAdapter({
  id: 'gdrive',
  displayName: 'Google Drive',
  description: 'Stores backups in a Google Drive folder (OAuth 2 refresh token in an OAUTH credential profile), with resumable uploads that become visible only when complete, range reads and paginated listings.',
  configSchema: gdriveStorageConfig,
  capabilities: {
    rangeReads: true,
    // Drive's md5Checksum is MD5, not the SHA-256 Holdfast records: nothing to compare.
    serverChecksum: false,
    parallelMetadataReads: true,
    symlinks: false,
    // A resumable session takes its chunks in order.
    maxParallelParts: 1,
  },
  requiredCredentials: ['OAUTH'],
  implementation: GdriveStorage,
});
