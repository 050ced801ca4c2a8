import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { DependencyContainer, InjectionToken } from 'tsyringe';
import type { RouteDefinition } from './http-contract.js';

/**
 * A long-lived connection endpoint (a WebSocket) served on the server's own HTTP listener: the composition hands it
 * every HTTP upgrade request whose path is exactly `path`, outside the koa route pipeline (the endpoint authenticates
 * its own clients).
 */
export interface UpgradeEndpoint {
  /** Exact request path, e.g. `/api/agents/connect`; no two endpoints may share one. */
  path: string;
  /** Takes over the socket of one upgrade request (answer or destroy it). */
  handleUpgrade(request: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Closes every connection it holds; called before the listener stops, so shutdown never waits on them. */
  closeAll(): Promise<void>;
}

/**
 * A token a plugin resolves. A bare token is required: some plugin must provide it (or the composition must have
 * registered it beforehand), and its provider registers, migrates and starts first. `optional` tokens are used when
 * present and looked up at use time; they never order plugins, which is how two plugins may use each other's
 * services at request time without forming a cycle.
 */
export type PluginRequirement = InjectionToken<unknown> | { token: InjectionToken<unknown>; optional: true };

/**
 * A feature plugin (identity, catalog, engine...). Plugins own entities, migrations, routes and background work,
 * and reach each other only through kernel tokens. Entities and migrations are opaque to the kernel; the
 * persistence plugin knows their type.
 */
export interface HoldfastPlugin {
  /** kebab-case name, unique among plugins. */
  name: string;
  /** Tokens this plugin registers in `register()`; no two plugins may provide the same token. */
  provides?: readonly InjectionToken<unknown>[];
  /** Tokens this plugin resolves (see {@link PluginRequirement}); the composition refuses to start when one is missing. */
  requires?: readonly PluginRequirement[];
  /** ORM entity schemas this plugin owns. */
  entities?: readonly unknown[];
  /** Migrations in the order they apply; names must be unique across plugins. */
  migrations?: readonly PluginMigration[];
  /** Register services into the root container (runs before the database opens). */
  register?(container: DependencyContainer): void;
  /** Routes to mount; called after every plugin registered. */
  routes?(container: DependencyContainer): RouteDefinition[];
  /** Upgrade (WebSocket) endpoints to serve on the same listener; called after `routes`. */
  upgrades?(container: DependencyContainer): UpgradeEndpoint[];
  /**
   * Subscribe to events (after migrations): the composition calls it on every plugin before it starts any, so no
   * event a starting plugin raises goes unheard, whatever the plugins' order. Unsubscribe in `stop`.
   */
  listen?(container: DependencyContainer): void;
  /** Start background work (after migrations and every plugin's `listen`). */
  start?(container: DependencyContainer): Promise<void>;
  /** Stop background work; called in reverse start order on shutdown. */
  stop?(container: DependencyContainer): Promise<void>;
}

/** A schema migration written against the dialect-neutral schema builder the persistence plugin provides. */
export interface PluginMigration {
  /** Globally unique and sortable, e.g. `20261120-identity-001-users`. */
  name: string;
  /** `builder` is the persistence plugin's schema builder (knex); `dialect` lets a migration branch when needed. */
  up(builder: unknown, dialect: 'sqlite' | 'postgresql'): Promise<void>;
}
