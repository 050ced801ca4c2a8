import type { DatabasePort } from '@holdfast/kernel';
import type { EntityManager } from '@mikro-orm/knex';
import type { InjectionToken } from 'tsyringe';

/**
 * The database as feature plugins use it: the kernel's ORM-free {@link DatabasePort} with the MikroORM
 * EntityManager typed. The kernel stays free of the ORM (ARCHITECTURE.md section 1); plugins that store rows
 * resolve {@link ORM_DATABASE} instead of `TOKENS.Database` and never cast the handle.
 */
export interface OrmDatabase extends DatabasePort {
  /** A fresh request-scoped EntityManager (SQL flavour: `getKnex()` and `getPlatform()` are available). */
  em(): EntityManager;
}

/** Registered by the composition (`@holdfast/boot`) with the same object as `TOKENS.Database`. */
export const ORM_DATABASE = Symbol.for('holdfast:orm-database') as InjectionToken<OrmDatabase>;

export type { EntityManager } from '@mikro-orm/knex';
