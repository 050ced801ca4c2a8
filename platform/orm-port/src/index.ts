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

/**
 * A plugin that stores values sealed with the system key (`TOKENS.SecretSealer`) outside the catalog's own tables
 * registers one of these, so `holdfast secrets rotate-key` re-seals them in the same transaction as the catalog's.
 */
export interface SealedSecretHolder {
  /** What the values are, for the rotation report: `two-factor and single sign-on secrets`. */
  readonly label: string;
  /** Replaces every sealed value the plugin stores by `reseal(value)` inside `transaction`; answers how many. */
  reseal(transaction: EntityManager, reseal: (sealed: string) => string): Promise<number>;
}

/** Multi-registration token: resolve with `container.resolveAll` (registered by identity, for example). */
export const SEALED_SECRET_HOLDERS = Symbol.for('holdfast:sealed-secret-holders') as InjectionToken<SealedSecretHolder>;
