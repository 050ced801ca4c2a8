import { defineSourceAdapter } from '@holdfast/sdk';
import { mssqlSourceConfig } from './config.js';
import { MssqlSource } from './mssql-source.js';

export { mssqlSourceConfig, type MssqlSourceConfig } from './config.js';
export { MssqlSource } from './mssql-source.js';
export { quoteName, quoteString } from './internal/quoting.js';

/** The `source-mssql` adapter: BACKUP DATABASE TO DISK, the .bak fetched over SFTP or a shared path. */
export default defineSourceAdapter({
  id: 'mssql',
  displayName: 'Microsoft SQL Server',
  description: 'Backs up a SQL Server database with BACKUP DATABASE ... TO DISK, streams the .bak out over SFTP or a shared directory and deletes it; restores with RESTORE DATABASE ... WITH MOVE.',
  configSchema: mssqlSourceConfig,
  capabilities: { multipleDatabases: false, listDatabases: true, restore: true, fileArchive: false },
  implementation: MssqlSource,
});
