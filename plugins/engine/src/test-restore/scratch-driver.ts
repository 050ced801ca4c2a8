import type { ResolvedAdapterConfig } from '@holdfast/kernel';
import { mysqlScratch } from './mysql-scratch.js';
import { postgresScratch } from './postgres-scratch.js';

/** What a test restore needs from a database server besides the source adapter's own restore. */
export interface ScratchDatabaseDriver {
  /** Display name of the engine, for messages. */
  engine: string;
  /** Table name -> exact row count of every user table (`schema.table` on PostgreSQL, the table name on MySQL). */
  tableRowCounts(config: ResolvedAdapterConfig, database: string): Promise<Record<string, number>>;
  databaseExists(config: ResolvedAdapterConfig, database: string): Promise<boolean>;
  dropDatabase(config: ResolvedAdapterConfig, database: string): Promise<void>;
  /** Databases whose name starts with `prefix` (to find scratch databases a crash left behind). */
  listDatabases(config: ResolvedAdapterConfig, prefix: string): Promise<string[]>;
}

/**
 * The driver for a source configuration, or null when the engine cannot inspect its databases: other engines, and
 * servers reached only over SSH (their tools run remotely; the engine has no direct connection).
 */
export function scratchDriverFor(config: ResolvedAdapterConfig): ScratchDatabaseDriver | null {
  if (config.config.ssh) return null;
  if (config.adapterId === 'postgres') return postgresScratch;
  if (config.adapterId === 'mysql') return mysqlScratch;
  return null;
}
