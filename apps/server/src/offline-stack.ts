import { composeHoldfast, type ComposedHoldfast } from '@holdfast/boot';
import { AdapterRegistry, type HoldfastPlugin } from '@holdfast/kernel';
import pino, { type Logger } from 'pino';
import { container as rootContainer } from 'tsyringe';
import { discoverAdapters } from './discovery/index.js';
import { featurePlugins } from './feature-plugins.js';
import { localPathPolicyOf } from './local-path-policy.js';
import { loadRuntimeConfig, type ServerSettings } from './runtime-config.js';
import { serverVersion } from './version.js';
import { resolveFileVariables } from './env-files.js';

/** Options of {@link withOfflineStack}. */
export interface OfflineStackOptions {
  env?: NodeJS.ProcessEnv;
  plugins?: HoldfastPlugin[];
  logger?: Logger;
  /** Apply pending migrations first (default true). */
  migrate?: boolean;
  /** Discover adapters as the server would, so configs validate the same (default true). */
  discover?: boolean;
}

/**
 * The server's composition without HTTP and without background work: the configured database (migrated) with
 * every feature plugin registered, for the CLI's offline commands and `holdfast migrate`. Closed after `work`.
 */
export async function withOfflineStack<T>(
  work: (stack: ComposedHoldfast, settings: ServerSettings) => Promise<T>,
  options: OfflineStackOptions = {},
): Promise<T> {
  const env = resolveFileVariables(options.env ?? process.env);
  const settings = loadRuntimeConfig(env, serverVersion());
  const logger = options.logger ?? pino({ level: 'silent' });
  const registry =
    options.discover === false
      ? new AdapterRegistry()
      : await discoverAdapters({ pluginDir: settings.pluginDir, include: settings.includeAdapters, exclude: settings.excludeAdapters }).catch(
          () => new AdapterRegistry(),
        );
  const container = rootContainer.createChildContainer();
  const stack = await composeHoldfast({
    plugins: options.plugins ?? featurePlugins(env),
    container,
    dataDir: settings.dataDir,
    databaseUrl: settings.databaseUrl,
    core: { logger, runtime: settings, adapters: registry, localPaths: localPathPolicyOf(settings) },
    migrate: options.migrate,
    startPlugins: false,
  });
  try {
    return await work(stack, settings);
  } finally {
    await stack.close();
  }
}
