import { defineStorageAdapter } from '@holdfast/sdk';
import { dropboxStorageConfig } from './config.js';
import { DropboxStorage } from './dropbox-storage.js';

export { dropboxStorageConfig, type DropboxStorageConfig } from './config.js';
export { DropboxStorage } from './dropbox-storage.js';
export { headerSafeJson } from './internal/api.js';

/** The `storage-dropbox` adapter: a folder in Dropbox, over OAuth 2 with an OAUTH credential profile. */
export default defineStorageAdapter({
  id: 'dropbox',
  displayName: 'Dropbox',
  description: 'Stores backups in a Dropbox folder (OAuth 2 refresh token in an OAUTH credential profile), with chunked upload sessions committed atomically, range reads and paginated listings.',
  configSchema: dropboxStorageConfig,
  capabilities: {
    rangeReads: true,
    // Dropbox's content_hash is its own block hash, not the SHA-256 Holdfast records: nothing to compare.
    serverChecksum: false,
    parallelMetadataReads: true,
    symlinks: false,
    // One upload session is sequential (append_v2 at the next offset).
    maxParallelParts: 1,
  },
  requiredCredentials: ['OAUTH'],
  implementation: DropboxStorage,
});
