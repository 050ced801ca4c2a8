import { defineStorageAdapter } from '@holdfast/sdk';
import { webdavStorageConfig } from './config.js';
import { WebdavStorage } from './webdav-storage.js';

export { webdavStorageConfig, type WebdavStorageConfig } from './config.js';
export { WebdavStorage } from './webdav-storage.js';

/** The `storage-webdav` adapter: a folder on a WebDAV server. */
export default defineStorageAdapter({
  id: 'webdav',
  displayName: 'WebDAV',
  description: 'Stores backups in a folder of a WebDAV server (Nextcloud, ownCloud, Apache, nginx), with atomic uploads and range reads.',
  configSchema: webdavStorageConfig,
  capabilities: {
    rangeReads: true,
    serverChecksum: false,
    parallelMetadataReads: true,
    symlinks: false,
    maxParallelParts: 1,
  },
  implementation: WebdavStorage,
});
