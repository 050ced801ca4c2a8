import type { Catalog } from '@holdfast/catalog';

/**
 * The server's composition without HTTP (`withOfflineStack`): the configured database, migrated, with the catalog
 * started on it (system key checked, records seeded) for the catalog commands. Adapters are discovered as the server
 * would, so configs validate the same.
 */
export async function withCatalog<T>(work: (catalog: Catalog) => Promise<T>): Promise<T> {
  const { withOfflineStack } = await import('@holdfast/server');
  const { CATALOG } = await import('@holdfast/catalog');
  return withOfflineStack(async ({ container }) => {
    const catalog = container.resolve(CATALOG);
    await catalog.start();
    return work(catalog);
  });
}
