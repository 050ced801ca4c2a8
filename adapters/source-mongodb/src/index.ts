import { defineSourceAdapter } from '@holdfast/sdk';
import { mongoSourceConfig } from './config.js';
import { MongoSource } from './mongo-source.js';

export { mongoSourceConfig, type MongoSourceConfig } from './config.js';
export { MongoSource } from './mongo-source.js';
export { FORMAT_VERSION as EXPORT_FORMAT_VERSION } from './internal/format.js';

/** The `source-mongodb` adapter: mongodump archives, or a driver export in Holdfast's documented format. */
export default defineSourceAdapter({
  id: 'mongodb',
  displayName: 'MongoDB',
  description: 'Backs up MongoDB with mongodump --archive when installed, else with the driver in a documented format Holdfast restores; users and roles on request; directly or through SSH.',
  configSchema: mongoSourceConfig,
  capabilities: { multipleDatabases: true, listDatabases: true, restore: true, fileArchive: false },
  implementation: MongoSource,
});
