import { createServer } from 'node:http';
import { TOKENS, type HoldfastPlugin } from '@holdfast/kernel';
import { createHttpApp } from '@holdfast/http';
import { openDatabase, type HoldfastDatabase } from '@holdfast/persistence';
import type { Logger } from 'pino';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { registerCoreServices } from './core-services.js';
import { discoverAdapters } from './discovery/index.js';
import { featurePlugins } from './feature-plugins.js';
import { listen, startPlugins, stopListening, stopPlugins } from './lifecycle.js';
import { createLogger } from './logger.js';
import { loadRuntimeConfig, type ServerSettings } from './runtime-config.js';
import { serverVersion } from './version.js';

/** Options of {@link startServer}; every one has a production default. */
export interface StartServerOptions {
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  plugins?: HoldfastPlugin[];
  /** Defaults to a child of tsyringe's global container, so servers started in one process stay apart. */
  container?: DependencyContainer;
  /** package.json whose dependencies are scanned for adapters (tests); defaults to apps/server's. */
  manifestPath?: string;
  host?: string;
}

/** A running server. */
export interface ServerHandle {
  url: string;
  port: number;
  container: DependencyContainer;
  settings: ServerSettings;
  logger: Logger;
  /** Stops listening, stops plugins in reverse order and closes the database; safe to call twice. */
  close(): Promise<void>;
}

/** Composes and starts Holdfast: config, adapters, plugins, database + migrations, HTTP. */
export async function startServer(options: StartServerOptions = {}): Promise<ServerHandle> {
  const settings = loadRuntimeConfig(options.env ?? process.env, serverVersion());
  const logger = options.logger ?? createLogger(settings.logLevel);
  const plugins = options.plugins ?? featurePlugins(options.env ?? process.env);
  const container = options.container ?? rootContainer.createChildContainer();
  const registry = await discoverAdapters({
    manifestPath: options.manifestPath,
    pluginDir: settings.pluginDir,
    include: settings.includeAdapters,
    exclude: settings.excludeAdapters,
    logger,
  });
  registerCoreServices(container, { settings, logger, registry, plugins });
  for (const plugin of plugins) plugin.register?.(container);

  const database = await openDatabase({ ...settings, plugins, logger });
  let started: HoldfastPlugin[] = [];
  try {
    container.register(TOKENS.Database, { useValue: database });
    logger.info({ dialect: database.dialect, location: database.location }, 'database opened');
    const applied = await database.migrate();
    logger.info({ applied: applied.length }, applied.length ? 'migrations applied' : 'database schema up to date');
    const routes = plugins.flatMap((plugin) => plugin.routes?.(container) ?? []);
    const app = createHttpApp({ container, routes, logger, trustProxy: settings.trustProxy });
    started = await startPlugins(plugins, container, logger);
    const server = createServer(app.callback());
    const port = await listen(server, settings.port, options.host);
    logger.info({ port, version: settings.version, adapters: registry.list().length }, 'holdfast listening');
    const close = onceOnly(() => shutdown(server, started, container, database, logger));
    return { url: `http://127.0.0.1:${port}`, port, container, settings, logger, close };
  } catch (error) {
    await stopPlugins(started, container, logger);
    await database.close();
    throw error;
  }
}

async function shutdown(
  server: import('node:http').Server,
  started: HoldfastPlugin[],
  container: DependencyContainer,
  database: HoldfastDatabase,
  logger: Logger,
): Promise<void> {
  logger.info('stopping HTTP listener');
  await stopListening(server);
  await stopPlugins(started, container, logger);
  logger.info('closing database');
  await database.close();
  logger.info('shutdown complete');
}

function onceOnly(work: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => (running ??= work());
}
