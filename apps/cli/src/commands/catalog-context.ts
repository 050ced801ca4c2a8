import type { Catalog } from '@holdfast/catalog';

/**
 * Opens the configured database (migrated) with the server's feature plugins and builds the catalog on it, without
 * listening, for the catalog commands. Adapters are discovered as the server would, so configs validate the same.
 */
export async function withCatalog<T>(work: (catalog: Catalog) => Promise<T>): Promise<T> {
  const { discoverAdapters, featurePlugins, loadRuntimeConfig, serverVersion } = await import('@holdfast/server');
  const { openDatabase } = await import('@holdfast/persistence');
  const { Catalog: CatalogClass } = await import('@holdfast/catalog');
  const { AdapterRegistry, TOKENS, silentLogger } = await import('@holdfast/kernel');
  const { container } = await import('tsyringe');
  const settings = loadRuntimeConfig(process.env, serverVersion());
  const registry = await discoverAdapters({ pluginDir: settings.pluginDir, include: settings.includeAdapters, exclude: settings.excludeAdapters }).catch(
    () => new AdapterRegistry(),
  );
  const plugins = featurePlugins();
  const database = await openDatabase({ ...settings, plugins, logger: silentLogger });
  try {
    await database.migrate();
    const scope = container.createChildContainer();
    scope.register(TOKENS.RuntimeConfig, { useValue: settings });
    scope.register(TOKENS.AdapterRegistry, { useValue: registry });
    scope.register(TOKENS.Database, { useValue: database });
    const catalog = new CatalogClass(scope, { env: process.env });
    await catalog.start();
    return await work(catalog);
  } finally {
    await database.close();
  }
}
