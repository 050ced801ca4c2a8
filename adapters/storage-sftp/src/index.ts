import { defineStorageAdapter } from '@holdfast/sdk';
import { sftpStorageConfig } from './config.js';
import { SftpStorage } from './sftp-storage.js';

export { sftpStorageConfig, type SftpStorageConfig } from './config.js';
export { SftpStorage } from './sftp-storage.js';

/** The `storage-sftp` adapter: a directory on an SFTP server. */
export default defineStorageAdapter({
  id: 'sftp',
  displayName: 'SFTP',
  description: 'Stores backups in a directory of an SFTP (SSH) server, with atomic uploads and range reads.',
  configSchema: sftpStorageConfig,
  capabilities: {
    rangeReads: true,
    serverChecksum: false,
    parallelMetadataReads: false,
    symlinks: true,
    maxParallelParts: 1,
  },
  implementation: SftpStorage,
});
