import type { OrmDatabase } from '@holdfast/orm-port';
import { instantiateAdapter, type AdapterRegistry, type JobCatalog, type KernelLogger, type SourceAdapter } from '@holdfast/kernel';
import type { DependencyContainer } from 'tsyringe';

/** Outcome of one UPDATE_DB_VERSIONS pass. */
export interface VersionPassResult {
  recorded: number;
  failed: Array<{ configId: string; name: string; error: string }>;
}

/**
 * UPDATE_DB_VERSIONS: `detectVersion()` on every source, each answer handed to the catalog's version recording
 * (`JobCatalog.recordSourceVersion`: a row on change, `db_version_changed` on a change after the first). A source
 * that cannot be reached is reported in the run message and skipped; it is the health check's job to flag it.
 */
export async function updateDbVersions(
  deps: { container: DependencyContainer; database: () => OrmDatabase; catalog: () => JobCatalog; registry: () => AdapterRegistry; logger: KernelLogger },
  signal?: AbortSignal,
): Promise<VersionPassResult> {
  const catalog = deps.catalog();
  if (!catalog.recordSourceVersion) throw new Error('the catalog records no version history (JobCatalog.recordSourceVersion missing)');
  if (!catalog.listAdapterConfigs) throw new Error('the catalog lists no adapter configurations (JobCatalog.listAdapterConfigs missing)');
  const rows = (await catalog.listAdapterConfigs({ type: 'database' })).map((config) => ({ id: config.configId, name: config.name }));
  const result: VersionPassResult = { recorded: 0, failed: [] };
  for (const row of rows) {
    if (signal?.aborted) break;
    let source: SourceAdapter | undefined;
    try {
      const resolved = await catalog.resolveAdapterConfig(row.id);
      const { definition } = deps.registry().require('source', resolved.adapterId);
      source = instantiateAdapter(deps.container, definition, resolved.config, {
        instanceId: resolved.configId,
        instanceName: resolved.name,
        logger: deps.logger,
        credentials: resolved.credentials,
        updateCredentials: resolved.updateCredentials,
      }) as SourceAdapter;
      const detected = await source.detectVersion();
      if (!detected.version) throw new Error('the source reported no version');
      await catalog.recordSourceVersion(row.id, detected.version, detected.edition);
      result.recorded += 1;
    } catch (error) {
      result.failed.push({ configId: row.id, name: row.name, error: error instanceof Error ? error.message : String(error) });
    } finally {
      await source?.dispose?.().catch(() => undefined);
    }
  }
  return result;
}
