import { silentLogger, type HoldfastPlugin, type KernelLogger } from '@holdfast/kernel';
import { openDatabase } from '@holdfast/persistence';
import { featurePlugins } from './feature-plugins.js';
import { loadRuntimeConfig } from './runtime-config.js';
import { serverVersion } from './version.js';

/** What {@link migrateDatabase} did. */
export interface MigrationReport {
  /** Where the database is (no password). */
  location: string;
  /** Names applied by this run, in order; empty when the schema was up to date. */
  applied: string[];
}

/** Applies pending migrations of every feature plugin to the configured database, without starting the server. */
export async function migrateDatabase(
  options: { env?: NodeJS.ProcessEnv; plugins?: HoldfastPlugin[]; logger?: KernelLogger } = {},
): Promise<MigrationReport> {
  const settings = loadRuntimeConfig(options.env ?? process.env, serverVersion());
  const database = await openDatabase({
    ...settings,
    plugins: options.plugins ?? featurePlugins(options.env ?? process.env),
    logger: options.logger ?? silentLogger,
  });
  try {
    return { location: database.location, applied: await database.migrate() };
  } finally {
    await database.close();
  }
}
