import { defineSourceAdapter } from '@holdfast/sdk';
import { volumeSourceConfig } from './config.js';
import { VolumeSource } from './volume-source.js';

export { volumeSourceConfig, type VolumeSourceConfig } from './config.js';
export { VolumeSource } from './volume-source.js';

/** The `source-volume` adapter: a Docker volume read and restored as a tar stream through the Engine API. */
export default defineSourceAdapter({
  id: 'volume',
  displayName: 'Docker volume',
  description: 'Backs up a Docker volume as a tar stream through the Docker Engine API, optionally stopping the containers that use it.',
  configSchema: volumeSourceConfig,
  capabilities: { multipleDatabases: false, listDatabases: true, restore: true, fileArchive: true },
  implementation: VolumeSource,
});
