import { defineStorageAdapter } from '@holdfast/sdk';
import { smbStorageConfig } from './config.js';
import { SmbStorage } from './smb-storage.js';

export { smbStorageConfig, type SmbStorageConfig } from './config.js';
export { SmbStorage } from './smb-storage.js';

/** The `storage-smb` adapter: a folder on an SMB2/SMB3 share, driven through Samba's smbclient. */
export default defineStorageAdapter({
  id: 'smb',
  displayName: 'SMB / Windows share',
  description: 'Stores backups in a folder of an SMB2/SMB3 share (Windows, Samba, NAS) through smbclient, with atomic uploads.',
  configSchema: smbStorageConfig,
  capabilities: {
    rangeReads: true,
    serverChecksum: false,
    parallelMetadataReads: false,
    symlinks: false,
    maxParallelParts: 1,
  },
  implementation: SmbStorage,
});
