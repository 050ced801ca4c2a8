import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHttpApp } from '@holdfast/http-server';
import { orderPlugins, TOKENS, type HoldfastPlugin, type UpgradeEndpoint } from '@holdfast/kernel';
import { ORM_DATABASE } from '@holdfast/orm-port';
import { openDatabase, type HoldfastDatabase } from '@holdfast/database';
import type { Logger } from 'pino';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import { registerCoreServices, type CoreServices } from './core-services.js';
import { pinScheduleLocale } from './date-locale.js';

/** What {@link composeHoldfast} assembles. */
export interface ComposeOptions {
  plugins: readonly HoldfastPlugin[];
  /** Holds what the caller registered beforehand (test doubles of ports); the core services and plugins register into it too. */
  container: DependencyContainer;
  /** Logger, event bus, runtime config, adapters, local path rule: registered before any plugin, each with a default. */
  core?: CoreServices;
  /** Embedded database directory (`HOLDFAST_DATA_DIR`). */
  dataDir?: string;
  /** `postgres://...` selects PostgreSQL instead of the embedded database. */
  databaseUrl?: string;
  /**
   * A database the caller already opened and owns (suites that share one schema across apps): used instead of
   * opening one from `dataDir`/`databaseUrl`, and left open by `close()`.
   */
  database?: HoldfastDatabase;
  /** Apply pending migrations (default true). */
  migrate?: boolean;
  /** Start plugins' background work (default true); the CLI's offline commands only need the database. */
  startPlugins?: boolean;
  /** Serve the plugins' routes; `false` (default) serves nothing. */
  http?: false | HttpOptions;
}

export interface HttpOptions {
  /** 0 picks a free port. */
  port: number;
  host?: string;
  trustProxy?: boolean;
  /** On close, cut open connections (SSE streams, keep-alive) at once instead of waiting for them; tests use it. */
  dropConnectionsOnClose?: boolean;
}

/** An assembled Holdfast. */
export interface ComposedHoldfast {
  container: DependencyContainer;
  database: HoldfastDatabase;
  /** The plugins in the order they registered, migrated and started (stopped in reverse). */
  plugins: HoldfastPlugin[];
  /** Names of the migrations this composition applied. */
  appliedMigrations: string[];
  /** Set when `http` was asked for. */
  port?: number;
  url?: string;
  /** Stops listening, stops started plugins in reverse order and closes the database; safe to call twice. */
  close(): Promise<void>;
}

/** Idle keep-alive connections are kept this long (longer than common clients and load balancers). */
const KEEP_ALIVE_TIMEOUT_MS = 76_000;

/** Tokens the composition registers itself once the database is open. */
const COMPOSITION_TOKENS: ReadonlySet<InjectionToken<unknown>> = new Set([TOKENS.Database, ORM_DATABASE, TOKENS.Plugins]);

/**
 * The one boot sequence: register the core services, order plugins by their declared tokens (refusing a missing token or a cycle before
 * anything opens), register them, open the database with their entities and migrations, migrate, start them in
 * order, mount their routes and listen. A failure part way stops what started and closes the database.
 */
export async function composeHoldfast(options: ComposeOptions): Promise<ComposedHoldfast> {
  const { container } = options;
  const logger = registerCoreServices(container, options.core ?? {}, {
    dataDir: options.dataDir,
    databaseUrl: options.databaseUrl,
    port: options.http ? options.http.port : undefined,
  });
  // Before any plugin computes a schedule (the catalog seeds its system tasks when it starts).
  pinScheduleLocale();
  const plugins = orderPlugins(options.plugins, (token) => COMPOSITION_TOKENS.has(token) || container.isRegistered(token, true));
  container.register(TOKENS.Plugins, { useValue: plugins });
  for (const plugin of plugins) plugin.register?.(container);

  const ownsDatabase = options.database === undefined;
  const database =
    options.database ?? (await openDatabase({ dataDir: requiredDataDir(options), databaseUrl: options.databaseUrl, plugins, logger }));
  container.register(TOKENS.Database, { useValue: database });
  container.register(ORM_DATABASE, { useValue: database });
  logger.info({ dialect: database.dialect, location: database.location }, 'database opened');

  const started: HoldfastPlugin[] = [];
  let server: Server | undefined;
  let endpoints: UpgradeEndpoint[] = [];
  try {
    const appliedMigrations = options.migrate === false ? [] : await database.migrate();
    if (options.migrate !== false) {
      logger.info({ applied: appliedMigrations.length }, appliedMigrations.length ? 'migrations applied' : 'database schema up to date');
    }
    if (options.startPlugins !== false) {
      // Every listener first: an event a plugin raises while it starts (a run reaped at the engine's start) is heard.
      for (const plugin of plugins) plugin.listen?.(container);
      await startInOrder(plugins, started, container, logger);
    }
    let port: number | undefined;
    if (options.http) {
      const routes = plugins.flatMap((plugin) => plugin.routes?.(container) ?? []);
      const app = createHttpApp({ container, routes, logger, trustProxy: options.http.trustProxy ?? false });
      server = createServer(app.callback());
      endpoints = plugins.flatMap((plugin) => plugin.upgrades?.(container) ?? []);
      serveUpgrades(server, endpoints);
      // Keep idle connections longer than clients and proxies do (undici 4 s, nginx 75 s, most load balancers 60 s):
      // with Node's 5 s default the server may close a socket just as a client reuses it, which the client sees
      // as ECONNRESET or a 502.
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
      port = await listen(server, options.http.port, options.http.host);
    }
    const http = options.http;
    const close = onceOnly(async () => {
      if (server) {
        logger.info('stopping HTTP listener');
        // Upgraded sockets keep the listener open until they end: close them first.
        await Promise.all(endpoints.map((endpoint) => endpoint.closeAll()));
        await stopListening(server, http ? http.dropConnectionsOnClose === true : false);
      }
      await stopInReverse(started, container, logger);
      if (ownsDatabase) {
        logger.info('closing database');
        await database.close();
      }
    });
    return { container, database, plugins, appliedMigrations, port, url: port === undefined ? undefined : `http://127.0.0.1:${port}`, close };
  } catch (error) {
    await Promise.all(endpoints.map((endpoint) => endpoint.closeAll().catch(() => undefined)));
    if (server) await stopListening(server, true).catch(() => undefined);
    await stopInReverse(started, container, logger);
    if (ownsDatabase) await database.close();
    throw error;
  }
}

function requiredDataDir(options: ComposeOptions): string {
  if (options.dataDir === undefined) throw new Error('composeHoldfast needs dataDir (or an opened database)');
  return options.dataDir;
}

async function startInOrder(plugins: readonly HoldfastPlugin[], started: HoldfastPlugin[], container: DependencyContainer, logger: Logger) {
  for (const plugin of plugins) {
    try {
      await plugin.start?.(container);
    } catch (error) {
      throw new Error(`Plugin ${plugin.name} failed to start: ${(error as Error).message}`, { cause: error });
    }
    started.push(plugin);
    logger.debug({ plugin: plugin.name }, 'plugin started');
  }
}

/** Stops plugins in reverse order; one failing stop is logged and does not keep the others running. */
async function stopInReverse(started: readonly HoldfastPlugin[], container: DependencyContainer, logger: Logger) {
  for (const plugin of [...started].reverse()) {
    if (!plugin.stop) continue;
    logger.info({ plugin: plugin.name }, 'stopping plugin');
    try {
      await plugin.stop(container);
    } catch (error) {
      logger.error({ err: error, plugin: plugin.name }, 'plugin failed to stop cleanly');
    }
  }
}

/**
 * Hands each upgrade request to the endpoint of its exact path; any other path gets a plain 404 and the socket is
 * closed, so a stray upgrade never holds a connection.
 */
function serveUpgrades(server: Server, endpoints: readonly UpgradeEndpoint[]): void {
  const byPath = new Map<string, UpgradeEndpoint>();
  for (const endpoint of endpoints) {
    if (byPath.has(endpoint.path)) throw new Error(`Two plugins serve upgrades on ${endpoint.path}`);
    byPath.set(endpoint.path, endpoint);
  }
  server.on('upgrade', (request, socket, head) => {
    const path = (request.url ?? '').split('?')[0] ?? '';
    const endpoint = byPath.get(path);
    if (endpoint) return endpoint.handleUpgrade(request, socket, head);
    socket.end('HTTP/1.1 404 Not Found\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
  });
}

function listen(server: Server, port: number, host: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Stops accepting connections and resolves when in-flight requests end (at once with `drop`). */
function stopListening(server: Server, drop: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    if (drop) server.closeAllConnections();
    else server.closeIdleConnections();
  });
}

function onceOnly(work: () => Promise<void>): () => Promise<void> {
  let running: Promise<void> | undefined;
  return () => (running ??= work());
}
