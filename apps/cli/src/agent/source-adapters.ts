import type { AdapterRegistry } from '@holdfast/kernel';

/**
 * The source adapter packages this agent can load: the server's own discovery (its dependencies and
 * `HOLDFAST_PLUGIN_DIR`), kept to sources. A package that fails to load stops discovery with its name, as on the
 * server, so the agent never reports an adapter it could not run. The registry is what the server's calls run.
 */
export async function loadableSourceAdapters(env: NodeJS.ProcessEnv): Promise<{ packages: string[]; registry: AdapterRegistry }> {
  const { discoverAdapters } = await import('@holdfast/server');
  const registry = await discoverAdapters({ pluginDir: env.HOLDFAST_PLUGIN_DIR || undefined });
  const packages = registry
    .list('source')
    .map((entry) => entry.origin.packageName)
    .sort();
  return { packages, registry };
}
