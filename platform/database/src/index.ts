export { openDatabase, MIGRATIONS_TABLE, type HoldfastDatabase, type OpenDatabaseOptions } from './database.js';
export {
  resolveConnectionTarget,
  describeTarget,
  EMBEDDED_DATABASE_FILE,
  type ConnectionTarget,
} from './connection.js';
export { collectMigrations, type OwnedMigration } from './migrations.js';
