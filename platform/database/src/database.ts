import type { HoldfastPlugin, KernelLogger } from '@holdfast/kernel';
import type { OrmDatabase } from '@holdfast/orm-port';
import { silentLogger } from '@holdfast/kernel';
import { MikroORM, type Options } from '@mikro-orm/core';
import type { AbstractSqlDriver, SqlEntityManager } from '@mikro-orm/knex';
import { describeTarget, prepareTarget, resolveConnectionTarget, type ConnectionTarget } from './connection.js';
import { createPrivateDatabaseFile, securePrivateFiles, tightenNewFiles } from './file-modes.js';
import { MigrationRunner } from './migration-runner.js';
import { collectMigrations, type OwnedMigration } from './migrations.js';

/** Name of the table that records applied migrations. */
export const MIGRATIONS_TABLE = 'holdfast_migrations';

/** What {@link openDatabase} needs. */
export interface OpenDatabaseOptions {
  /** Directory of the embedded database (`HOLDFAST_DATA_DIR`); created when missing. */
  dataDir: string;
  /** `DATABASE_URL`: unset selects the embedded libsql file, `postgres://` selects PostgreSQL. */
  databaseUrl?: string;
  /** Feature plugins whose entities and migrations make up the schema. */
  plugins: readonly HoldfastPlugin[];
  logger?: KernelLogger;
}

/** The opened database: the typed {@link OrmDatabase} port plus migration control and the ORM itself. */
export interface HoldfastDatabase extends OrmDatabase {
  readonly orm: MikroORM<AbstractSqlDriver>;
  /** Where the database is, safe to log (no password). */
  readonly location: string;
  em(): SqlEntityManager;
  /** Applies pending migrations in name order, each in its own transaction; resolves the names applied. */
  migrate(): Promise<string[]>;
  /** Names of migrations not applied yet, in the order they would run. */
  pendingMigrations(): Promise<string[]>;
  close(): Promise<void>;
}

// Only the chosen dialect's driver is loaded: each one (with knex's dialect and the client library) holds about 20
// MiB of memory for the life of the process, and an installation uses one.
async function driverOptions(target: ConnectionTarget): Promise<Pick<Options<AbstractSqlDriver>, 'driver' | 'dbName' | 'clientUrl'>> {
  if (target.dialect === 'sqlite') return { driver: (await import('@mikro-orm/libsql')).LibSqlDriver, dbName: target.file };
  return { driver: (await import('@mikro-orm/postgresql')).PostgreSqlDriver, clientUrl: target.url };
}

/** Opens the database chosen by `databaseUrl`/`dataDir` with every plugin's entities and migrations. */
export async function openDatabase(options: OpenDatabaseOptions): Promise<HoldfastDatabase> {
  const logger = options.logger ?? silentLogger;
  const target = resolveConnectionTarget(options.dataDir, options.databaseUrl);
  const migrations = collectMigrations(options.plugins);
  await prepareTarget(target, options.dataDir);
  if (target.dialect === 'sqlite') {
    // The database holds every record (and sealed secrets): private to the server user, whatever the umask.
    await securePrivateFiles(options.dataDir, logger);
    await createPrivateDatabaseFile(target.file);
  }
  const entities = options.plugins.flatMap((plugin) => [...(plugin.entities ?? [])]) as Options['entities'];
  const orm = await MikroORM.init<AbstractSqlDriver>({
    ...(await driverOptions(target)),
    entities,
    // Schema comes from migrations only (migration-runner.ts); MikroORM must not compare or alter it on its own.
    ensureDatabase: false,
    allowGlobalContext: false,
    debug: false,
  });
  if (target.dialect === 'sqlite') await tightenNewFiles(options.dataDir);
  return new OpenedDatabase(orm, target, migrations, logger);
}

class OpenedDatabase implements HoldfastDatabase {
  readonly dialect: 'sqlite' | 'postgresql';
  readonly location: string;
  private isClosed = false;
  private readonly migrations: MigrationRunner;

  constructor(
    readonly orm: MikroORM<AbstractSqlDriver>,
    target: ConnectionTarget,
    migrations: readonly OwnedMigration[],
    private readonly logger: KernelLogger,
  ) {
    this.dialect = target.dialect;
    this.location = describeTarget(target);
    this.migrations = new MigrationRunner(orm.em.getConnection(), MIGRATIONS_TABLE, migrations, target.dialect);
  }

  em(): SqlEntityManager {
    return this.orm.em.fork();
  }

  async isReachable(): Promise<boolean> {
    if (this.isClosed) return false;
    try {
      return (await this.orm.checkConnection()).ok;
    } catch {
      return false;
    }
  }

  async migrate(): Promise<string[]> {
    return this.migrations.up((name) => this.logger.info({ migration: name }, 'migration applied'));
  }

  async pendingMigrations(): Promise<string[]> {
    return this.migrations.pending();
  }

  async close(): Promise<void> {
    if (this.isClosed) return;
    this.isClosed = true;
    await this.orm.close(true);
  }
}
