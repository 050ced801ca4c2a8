import { fileURLToPath } from 'node:url';
import { AdapterRegistry, adapterName, silentLogger, type KernelLogger, type RegisteredAdapter } from '@holdfast/kernel';
import { dependencyCandidates, pluginDirCandidates } from './candidates.js';
import { shareHostPackagesWith } from './host-packages.js';
import { loadAdapter } from './load-adapter.js';
import type { AdapterCandidate } from './package-manifest.js';

export { packageEntry, type AdapterCandidate } from './package-manifest.js';
export { HOST_SHARED_PACKAGES, shareHostPackagesWith } from './host-packages.js';

/** apps/server's own package.json (one level above both src/ and dist/). */
export const SERVER_MANIFEST_PATH = fileURLToPath(new URL('../../package.json', import.meta.url));

/** What {@link discoverAdapters} scans and filters. */
export interface DiscoveryOptions {
  /** package.json whose `dependencies` are scanned; defaults to apps/server's. */
  manifestPath?: string;
  /** `HOLDFAST_PLUGIN_DIR`: a directory of community adapter packages. */
  pluginDir?: string;
  /** Adapter names (`storage-local`, `notify-generic-webhook`: see `adapterName`) to load exclusively (empty: all). */
  include?: readonly string[];
  /** Adapter names never to load; an excluded package is not even imported. */
  exclude?: readonly string[];
  registry?: AdapterRegistry;
  logger?: KernelLogger;
}

function isWanted(candidate: AdapterCandidate, include: readonly string[], exclude: readonly string[]): boolean {
  const key = adapterName(candidate.block.kind, candidate.block.id);
  return (include.length === 0 || include.includes(key)) && !exclude.includes(key);
}

/**
 * Finds adapter packages among the server's dependencies, then in the plugin directory, imports and validates each
 * wanted one and registers it. The first bad package stops discovery with an error naming it.
 */
export async function discoverAdapters(options: DiscoveryOptions = {}): Promise<AdapterRegistry> {
  const registry = options.registry ?? new AdapterRegistry();
  const logger = options.logger ?? silentLogger;
  const include = options.include ?? [];
  const exclude = options.exclude ?? [];
  const candidates = await dependencyCandidates(options.manifestPath ?? SERVER_MANIFEST_PATH);
  if (options.pluginDir) {
    candidates.push(...(await pluginDirCandidates(options.pluginDir)));
    // Before the first import from it: a community package gets the server's kernel, sdk and container.
    await shareHostPackagesWith(options.pluginDir);
  }

  const loaded: RegisteredAdapter[] = [];
  for (const candidate of candidates) {
    const key = adapterName(candidate.block.kind, candidate.block.id);
    if (!isWanted(candidate, include, exclude)) {
      logger.info({ adapter: key, package: candidate.packageName }, 'adapter skipped by include/exclude');
      continue;
    }
    loaded.push(await loadAdapter(candidate, registry));
    logger.info(
      { adapter: key, package: candidate.packageName, version: candidate.version, directory: candidate.directory },
      'adapter loaded',
    );
  }
  for (const name of include) {
    if (!loaded.some((entry) => adapterName(entry.definition.kind, entry.definition.id) === name)) {
      logger.warn({ adapter: name }, 'HOLDFAST_ADAPTERS_INCLUDE names an adapter that is not installed');
    }
  }
  return registry;
}
