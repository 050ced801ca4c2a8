import { defineStorageAdapter } from '@holdfast/sdk';
import { azureBlobStorageConfig } from './config.js';
import { AzureBlobStorage } from './azure-blob-storage.js';

export { azureBlobStorageConfig, type AzureBlobStorageConfig, ACCESS_TIERS } from './config.js';
export { AzureBlobStorage } from './azure-blob-storage.js';

/** The `storage-azure-blob` adapter: block blobs in an Azure Storage container (or Azurite). */
export default defineStorageAdapter({
  id: 'azure-blob',
  displayName: 'Azure Blob Storage',
  description: 'Stores backups as block blobs in an Azure Storage container, uploaded in parallel blocks committed atomically, with range reads.',
  configSchema: azureBlobStorageConfig,
  capabilities: {
    rangeReads: true,
    // Azure stores a Content-MD5 only for single-request uploads, not for committed block lists.
    serverChecksum: false,
    parallelMetadataReads: true,
    symlinks: false,
    maxParallelParts: 32,
  },
  implementation: AzureBlobStorage,
});
