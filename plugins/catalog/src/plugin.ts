import { TOKENS, type HoldfastPlugin } from '@holdfast/kernel';
import { instanceCachingFactory, type DependencyContainer, type InjectionToken } from 'tsyringe';
import { Catalog, type CatalogOptions } from './catalog.js';
import { catalogEntities } from './entities/index.js';
import { catalogMigrations } from './migrations/001-catalog-schema.js';

/** The catalog's composition object in the container (for the CLI and tests; other plugins use kernel tokens). */
export const CATALOG = Symbol.for('holdfast:catalog') as InjectionToken<Catalog>;

/**
 * The catalog plugin: jobs, adapter configs, credential and encryption profiles, templates, presets, settings and
 * export/import. Registers the kernel's `TOKENS.Settings` and `TOKENS.JobCatalog`; checks the system key against
 * its canary and seeds system records at start.
 */
export function createCatalogPlugin(options: CatalogOptions = {}): HoldfastPlugin {
  const catalogOf = (container: DependencyContainer) => container.resolve(CATALOG);
  return {
    name: 'catalog',
    entities: catalogEntities,
    migrations: catalogMigrations,
    register(container) {
      container.register(CATALOG, { useFactory: instanceCachingFactory((c) => new Catalog(c, options)) });
      container.register(TOKENS.Settings, { useFactory: (c) => catalogOf(c).settings });
      container.register(TOKENS.JobCatalog, { useFactory: (c) => catalogOf(c).jobCatalog });
    },
    routes: (container) => catalogOf(container).routes(),
    start: (container) => catalogOf(container).start(),
  };
}
