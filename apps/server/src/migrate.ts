import type { HoldfastPlugin } from '@holdfast/kernel';
import type { Logger } from 'pino';
import { withOfflineStack } from './offline-stack.js';

/** What {@link migrateDatabase} did. */
export interface MigrationReport {
  /** Where the database is (no password). */
  location: string;
  /** Names applied by this run, in order; empty when the schema was up to date. */
  applied: string[];
}

/** Applies pending migrations of every feature plugin to the configured database, without starting the server. */
export async function migrateDatabase(options: { env?: NodeJS.ProcessEnv; plugins?: HoldfastPlugin[]; logger?: Logger } = {}): Promise<MigrationReport> {
  return withOfflineStack(async (stack) => ({ location: stack.database.location, applied: stack.appliedMigrations }), { ...options, discover: false });
}
