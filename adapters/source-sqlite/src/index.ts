import { defineSourceAdapter } from '@holdfast/sdk';
import { sqliteSourceConfig } from './config.js';
import { SqliteSource } from './sqlite-source.js';

export { sqliteSourceConfig, type SqliteSourceConfig } from './config.js';
export { SqliteSource } from './sqlite-source.js';

export default defineSourceAdapter({
  id: 'sqlite',
  displayName: 'SQLite',
  description: 'Copies an SQLite database file with the online backup API (safe while the application writes) and restores it after PRAGMA integrity_check, locally or on a host reached over SSH.',
  configSchema: sqliteSourceConfig,
  capabilities: { multipleDatabases: false, listDatabases: true, restore: true, fileArchive: false, scratchRestore: 'file' },
  implementation: SqliteSource,
});
