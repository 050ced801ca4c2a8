import type { DatabasePort } from '@holdfast/kernel';
import type { SqlEntityManager } from '@mikro-orm/knex';
import type { InjectionToken } from 'tsyringe';

/** The two databases Holdfast runs on: the embedded libsql file or PostgreSQL. */
export type Dialect = DatabasePort['dialect'];

/**
 * The database as feature plugins use it: the kernel's ORM-free {@link DatabasePort} with the MikroORM
 * EntityManager typed. The kernel stays free of the ORM (ARCHITECTURE.md section 1); plugins that store rows
 * resolve {@link ORM_DATABASE} instead of `TOKENS.Database` and never cast the handle.
 */
export interface OrmDatabase extends DatabasePort {
  /** A fresh request-scoped SQL EntityManager: `getKnex()`, `getConnection()` and `getPlatform()` are available. */
  em(): SqlEntityManager;
}

/** Registered by the composition (`@holdfast/boot`) with the same object as `TOKENS.Database`. */
export const ORM_DATABASE = Symbol.for('holdfast:orm-database') as InjectionToken<OrmDatabase>;

export type { EntityManager, SqlEntityManager, Knex } from '@mikro-orm/knex';
export { defineMigration } from './migration.js';
export { pgClient, type PgClient, type PgSession } from './pg-client.js';

