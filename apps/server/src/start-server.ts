import { composeHoldfast } from '@holdfast/boot';
import { processRoleFrom } from '@holdfast/engine';
import type { HoldfastPlugin } from '@holdfast/kernel';
import type { Logger } from 'pino';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { discoverAdapters } from './discovery/index.js';
import { featurePlugins } from './feature-plugins.js';
import { localPathPolicyOf } from './local-path-policy.js';
import { createLogger } from './logger.js';
import { loadRuntimeConfig, type ServerSettings } from './runtime-config.js';
import { serverVersion } from './version.js';
import { registerWebApp } from './web-app.js';
import { resolveFileVariables } from './env-files.js';

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

/** Composes and starts Holdfast: config and adapters, then the one boot sequence of `@holdfast/boot` with them as core services. */
export async function startServer(options: StartServerOptions = {}): Promise<ServerHandle> {
  // `DATABASE_URL_FILE`, `HOLDFAST_ADMIN_PASSWORD_FILE` (container secrets) become their variables first.
  const env = resolveFileVariables(options.env ?? process.env);
  const settings = loadRuntimeConfig(env, serverVersion());
  // Checked before anything starts, so a typo fails with a message naming the variable.
  const role = processRoleFrom(env);
  const logger = options.logger ?? createLogger(settings.logLevel);
  const plugins = options.plugins ?? featurePlugins(env);
  const container = options.container ?? rootContainer.createChildContainer();
  const registry = await discoverAdapters({
    manifestPath: options.manifestPath,
    pluginDir: settings.pluginDir,
    include: settings.includeAdapters,
    exclude: settings.excludeAdapters,
    logger,
  });
  registerWebApp(container, env, logger);
  const stack = await composeHoldfast({
    plugins,
    container,
    dataDir: settings.dataDir,
    databaseUrl: settings.databaseUrl,
    core: { logger, runtime: settings, adapters: registry, localPaths: localPathPolicyOf(settings) },
    http: { port: settings.port, host: options.host, trustProxy: settings.trustProxy },
  });
  const port = stack.port!;
  logger.info({ port, version: settings.version, adapters: registry.list().length, role }, 'holdfast listening');
  const close = async () => {
    await stack.close();
    logger.info('shutdown complete');
  };
  return { url: stack.url!, port, container, settings, logger, close: onceOnly(close) };
}

function onceOnly(work: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => (running ??= work());
}
