import { defineStorageAdapter } from '@holdfast/sdk';
import { s3StorageConfig } from './config.js';
import { S3Storage } from './s3-storage.js';

export { s3StorageConfig, type S3StorageConfig } from './config.js';
export { S3Storage } from './s3-storage.js';
export { partSizeFor, maxBytes, MAX_PARTS } from './internal/part-size.js';
export { S3_PRESETS, resolveEndpoint, type S3Preset } from './internal/presets.js';

/** The `storage-s3` adapter: a bucket on AWS S3 or any S3-compatible service. */
export default defineStorageAdapter({
  id: 's3',
  displayName: 'Amazon S3 / S3-compatible',
  description: 'Stores backups in an S3 bucket (AWS, Cloudflare R2, Backblaze B2, Wasabi, MinIO, Hetzner, Ceph...), with atomic multipart uploads and range reads.',
  configSchema: s3StorageConfig,
  capabilities: {
    rangeReads: true,
    // ETags are MD5s (or MD5s of part MD5s), not the SHA-256 Holdfast records, so there is nothing to compare.
    serverChecksum: false,
    parallelMetadataReads: true,
    symlinks: false,
    // The schema's maximum: each instance uses its configured parallelParts (default 8), never more.
    maxParallelParts: 32,
  },
  // Optional: an ACCESS_KEY profile may replace the key pair in the config.
  requiredCredentials: [],
  implementation: S3Storage,
});
