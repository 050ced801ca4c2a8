import { defineStorageAdapter } from '@holdfast/sdk';
import { rsyncStorageConfig } from './config.js';
import { RsyncStorage } from './rsync-storage.js';

export { rsyncStorageConfig, type RsyncStorageConfig } from './config.js';
export { RsyncStorage } from './rsync-storage.js';

/** The `storage-rsync` adapter: rsync over SSH, or to an rsync daemon. */
export default defineStorageAdapter({
  id: 'rsync',
  displayName: 'rsync (SSH or daemon)',
  description: 'Stores backups with rsync: over SSH streamed without a local copy, or on an rsync daemon module; atomic puts and range reads.',
  configSchema: rsyncStorageConfig,
  capabilities: {
    rangeReads: true,
    // rsync checks each transfer with a whole-file checksum itself, but hands no digest to Holdfast.
    serverChecksum: false,
    // One SSH connection or one daemon process per operation: metadata reads stay sequential (SPEC "Limits").
    parallelMetadataReads: false,
    symlinks: false,
    maxParallelParts: 1,
  },
  implementation: RsyncStorage,
});
