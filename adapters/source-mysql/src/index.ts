import { defineSourceAdapter } from '@holdfast/sdk';
import { mysqlSourceConfig } from './config.js';
import { MysqlSource } from './mysql-source.js';

export { mysqlSourceConfig, type MysqlSourceConfig } from './config.js';
export { MysqlSource } from './mysql-source.js';

export default defineSourceAdapter({
  id: 'mysql',
  displayName: 'MySQL / MariaDB',
  description: 'Dumps databases with mariadb-dump or mysqldump (one consistent snapshot, routines, events, triggers) and restores them through the client, locally or on a host reached over SSH.',
  configSchema: mysqlSourceConfig,
  capabilities: { multipleDatabases: true, listDatabases: true, restore: true, fileArchive: false, scratchRestore: 'database' },
  implementation: MysqlSource,
});
