import { defineStorageAdapter } from '@holdfast/sdk';
import { ftpStorageConfig } from './config.js';
import { FtpStorage } from './ftp-storage.js';

export { ftpStorageConfig, type FtpStorageConfig } from './config.js';
export { FtpStorage } from './ftp-storage.js';

/** The `storage-ftp` adapter: a directory on an FTP or FTPS server. */
export default defineStorageAdapter({
  id: 'ftp',
  displayName: 'FTP / FTPS',
  description: 'Stores backups in a directory of an FTP server, over explicit or implicit TLS (FTPS) or plain FTP, with atomic uploads.',
  configSchema: ftpStorageConfig,
  capabilities: {
    rangeReads: true,
    serverChecksum: false,
    parallelMetadataReads: false,
    symlinks: false,
    maxParallelParts: 1,
  },
  implementation: FtpStorage,
});
