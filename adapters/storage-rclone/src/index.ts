import { defineStorageAdapter } from '@holdfast/sdk';
import { rcloneStorageConfig } from './config.js';
import { RcloneStorage } from './rclone-storage.js';

export { rcloneStorageConfig, type RcloneStorageConfig } from './config.js';
export { RcloneStorage } from './rclone-storage.js';

/** The `storage-rclone` adapter: any rclone remote, through the rclone binary. */
export default defineStorageAdapter({
  id: 'rclone',
  displayName: 'rclone remote',
  description: 'Stores backups on any rclone remote (S3, Google Drive, WebDAV, SFTP, local...) through the rclone binary, with atomic puts and range reads.',
  configSchema: rcloneStorageConfig,
  capabilities: {
    rangeReads: true,
    // rclone compares hashes on copies, but rcat gives Holdfast no server-side digest to check.
    serverChecksum: false,
    // Each metadata read is an rclone process against an unknown backend (possibly FTP/SFTP): keep them sequential.
    parallelMetadataReads: false,
    symlinks: false,
    maxParallelParts: 1,
  },
  implementation: RcloneStorage,
});
