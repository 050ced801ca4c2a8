import { ORM_DATABASE } from '@holdfast/orm-port';
import { optionalToken, resolveOptional, TOKENS, type HoldfastPlugin, type KernelLogger } from '@holdfast/kernel';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import { DownloadTokenStore, type TokenStoreClock } from './download-tokens.js';
import { addDownloadTokenArchivePath, createDownloadTokensTable, DatabaseDownloadTokens, MemoryDownloadTokens, type DownloadTokens } from './shared-download-tokens.js';
import { createStorageListCacheTable, DEFAULT_LIST_CACHE_TTL_MS, StorageListCache, StorageListCacheEntity } from './list-cache.js';
import { storageRoutes } from './routes/storage-routes.js';
import { StorageAccess } from './storage-access.js';
import { StorageBrowser } from './storage-browser.js';

/** The storage browser service in the container (tests and the CLI). */
export const STORAGE_BROWSER = Symbol.for('holdfast:storage-browser') as InjectionToken<StorageBrowser>;

/** Options of {@link createStorageBrowserPlugin}. */
export interface StorageBrowserPluginOptions {
  /** Age after which a cached listing is read again (default 60 s). */
  listCacheTtlMs?: number;
  /** Clock of the download tokens (tests). */
  clock?: TokenStoreClock;
}

/**
 * The storage browser plugin: cached file listings, single-use download URLs and the public download, lock and
 * delete. Needs `TOKENS.Database`, `TOKENS.JobCatalog`, `TOKENS.BackupReader` and the boot's core services; uses
 * `TOKENS.AuditWriter` when registered.
 */
export function createStorageBrowserPlugin(options: StorageBrowserPluginOptions = {}): HoldfastPlugin {
  let tokens: DownloadTokens | undefined;
  // On PostgreSQL several server processes may serve one installation: tokens go to a shared table there.
  const tokensOf = (container: DependencyContainer): DownloadTokens => {
    if (tokens) return tokens;
    const database = container.resolve(ORM_DATABASE);
    tokens = database.dialect === 'postgresql' ? new DatabaseDownloadTokens(() => database, options.clock) : new MemoryDownloadTokens(new DownloadTokenStore(options.clock));
    return tokens;
  };
  let browser: StorageBrowser | undefined;
  let cache: StorageListCache | undefined;
  const unsubscribe: Array<() => void> = [];
  const cacheOf = (container: DependencyContainer) =>
    (cache ??= new StorageListCache(container.resolve(ORM_DATABASE), options.listCacheTtlMs ?? DEFAULT_LIST_CACHE_TTL_MS));
  const browserOf = (container: DependencyContainer): StorageBrowser => {
    if (browser) return browser;
    const base = container.resolve(TOKENS.Logger);
    const logger: KernelLogger = base.child?.({ plugin: 'storage-browser' }) ?? base;
    browser = new StorageBrowser({
      access: new StorageAccess(container, () => container.resolve(TOKENS.JobCatalog), () => container.resolve(TOKENS.AdapterRegistry), logger),
      cache: cacheOf(container),
      tokens: tokensOf(container),
      reader: () => container.resolve(TOKENS.BackupReader),
      audit: () => resolveOptional(container, TOKENS.AuditWriter),
      logger,
    });
    return browser;
  };
  return {
    name: 'storage-browser',
    provides: [STORAGE_BROWSER],
    requires: [
      ORM_DATABASE,
      TOKENS.AdapterRegistry,
      TOKENS.JobCatalog,
      TOKENS.BackupReader,
      TOKENS.EventBus,
      TOKENS.Logger,
      optionalToken(TOKENS.AuditWriter),
      optionalToken(TOKENS.AccessPolicy),
      optionalToken(TOKENS.ProtectedActions),
    ],
    entities: [StorageListCacheEntity],
    migrations: [createStorageListCacheTable, createDownloadTokensTable, addDownloadTokenArchivePath],
    register(container) {
      container.register(STORAGE_BROWSER, { useFactory: browserOf });
    },
    routes: (container) => storageRoutes(browserOf(container), () => resolveOptional(container, TOKENS.ProtectedActions)),
    async start(container) {
      tokensOf(container).start();
      const events = container.resolve(TOKENS.EventBus);
      // A backup that wrote anything (Success or Partial) may have uploaded to, and pruned, any destination.
      for (const name of ['backup_success', 'backup_partial'] as const) {
        unsubscribe.push(events.on(name, () => cacheOf(container).invalidate()));
      }
    },
    async stop() {
      for (const off of unsubscribe.splice(0)) off();
      tokens?.stop();
    },
  };
}
