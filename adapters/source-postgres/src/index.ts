import { defineSourceAdapter } from '@holdfast/sdk';
import { postgresSourceConfig } from './config.js';
import { PostgresSource } from './postgres-source.js';

export { postgresSourceConfig, type PostgresSourceConfig } from './config.js';
export { PostgresSource } from './postgres-source.js';

export default defineSourceAdapter({
  id: 'postgres',
  displayName: 'PostgreSQL',
  description: 'Dumps databases with pg_dump (custom format) and restores them with pg_restore, locally or on a host reached over SSH.',
  configSchema: postgresSourceConfig,
  capabilities: { multipleDatabases: true, listDatabases: true, restore: true, fileArchive: false, seekableArchive: true, scratchRestore: 'database' },
  implementation: PostgresSource,
});
