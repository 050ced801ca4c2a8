import { optionalToken, TOKENS, type HoldfastPlugin } from '@holdfast/kernel';
import { ORM_DATABASE } from '@holdfast/orm-port';
import { instanceCachingFactory, type DependencyContainer, type InjectionToken } from 'tsyringe';
import { Catalog, type CatalogOptions } from './catalog.js';
import { catalogEntities } from './entities/index.js';
import { catalogMigrations } from './migrations/001-catalog-schema.js';
import { CatalogResourceNames } from './shared/resource-names.js';

/** The catalog's composition object in the container (for the CLI and tests; other plugins use kernel tokens). */
export const CATALOG = Symbol.for('holdfast:catalog') as InjectionToken<Catalog>;

/**
 * The catalog plugin: jobs, adapter configs, credential and encryption profiles, templates, presets, settings and
 * export/import. Registers the kernel's `TOKENS.Settings` and `TOKENS.JobCatalog`; checks the system key against
 * its canary and seeds system records at start. `TOKENS.ConfigExporter` serves the export document;
 * `TOKENS.ResourceNames` names its records in the audit log.
 */
export function createCatalogPlugin(options: CatalogOptions = {}): HoldfastPlugin {
  const catalogOf = (container: DependencyContainer) => container.resolve(CATALOG);
  return {
    name: 'catalog',
    provides: [CATALOG, TOKENS.Settings, TOKENS.JobCatalog, TOKENS.SecretSealer, TOKENS.ConfigExporter, TOKENS.ResourceNames],
    requires: [
      ORM_DATABASE,
      TOKENS.AdapterRegistry,
      TOKENS.RuntimeConfig,
      TOKENS.Logger,
      TOKENS.EventBus,
      // Local path fields are checked when the host registered its policy (the server always does).
      optionalToken(TOKENS.LocalPathPolicy),
      optionalToken(TOKENS.AccessPolicy),
      optionalToken(TOKENS.AuditWriter),
      optionalToken(TOKENS.AdapterHealth),
      // Observability keeps the system task schedules; the configuration export and import carry them through it.
      optionalToken(TOKENS.SystemTaskSchedules),
      // The engine builds recovery kits and itself needs the job catalog: looked up when a kit is asked for.
      optionalToken(TOKENS.RecoveryKitBuilder),
      // Identity's guard of actions that can lose backups (deleting destinations and profiles, changing retention).
      optionalToken(TOKENS.ProtectedActions),
    ],
    entities: catalogEntities,
    migrations: catalogMigrations,
    register(container) {
      container.register(CATALOG, { useFactory: instanceCachingFactory((c) => new Catalog(c, options)) });
      container.register(TOKENS.Settings, { useFactory: (c) => catalogOf(c).settings });
      container.register(TOKENS.JobCatalog, { useFactory: (c) => catalogOf(c).jobCatalog });
      // Other plugins (identity) seal their secrets through this port; the key is loaded on first use.
      // Observability's configuration self-backup writes this document; it needs no other part of the catalog.
      container.register(TOKENS.ConfigExporter, { useFactory: (c) => ({ export: (actor, encryptionProfileId) => catalogOf(c).transfer.export(actor, encryptionProfileId) }) });
      container.register(TOKENS.SecretSealer, { useFactory: (c) => ({ seal: (text) => catalogOf(c).deps.box().seal(text), open: (sealed) => catalogOf(c).deps.box().open(sealed) }) });
      // Identity names jobs, adapter configs, profiles and templates in the audit log through this port.
      container.register(TOKENS.ResourceNames, { useFactory: (c) => new CatalogResourceNames(catalogOf(c).deps) });
    },
    routes: (container) => catalogOf(container).routes(),
    start: (container) => catalogOf(container).start(),
  };
}
