// A real koa app from the http plugin with the identity plugin registered, on an ephemeral port, plus a small
// client that keeps the session cookie and the CSRF token like a browser page would.
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import pino from 'pino';
import { EventBus, TOKENS, type RouteDefinition } from '@holdfast/kernel';
import { createHttpApp } from '@holdfast/http';
import { createIdentityPlugin, IDENTITY_SERVICES } from '../../src/plugin.js';
import type { IdentityConfig } from '../../src/config.js';
import type { IdentityServices } from '../../src/services.js';
import type { TestDatabase } from './database.js';

/** A started app. */
export interface RunningIdentityApp {
  url: string;
  container: DependencyContainer;
  services: IdentityServices;
  events: EventBus;
  close(): Promise<void>;
}

/** Options of {@link startIdentityApp}. */
export interface StartOptions {
  config?: Partial<IdentityConfig>;
  env?: NodeJS.ProcessEnv;
  /** Extra routes (e.g. a scoped job route standing in for the catalog plugin). */
  routes?: RouteDefinition[];
  /** Keep SPEC default rate limits; otherwise the harness raises them so many requests per test pass. */
  keepDefaultLimits?: boolean;
}

/** Builds and starts the app over `db`. */
export async function startIdentityApp(db: TestDatabase, options: StartOptions = {}): Promise<RunningIdentityApp> {
  const container = rootContainer.createChildContainer();
  container.register(TOKENS.Database, { useValue: db.database });
  const events = new EventBus();
  container.register(TOKENS.EventBus, { useValue: events });
  const plugin = createIdentityPlugin({ env: options.env ?? {}, config: { settingsCacheMs: 0, ...options.config } });
  plugin.register!(container);
  const services = container.resolve(IDENTITY_SERVICES);
  if (!options.keepDefaultLimits) {
    for (const key of ['authPoints', 'apiPoints', 'mutationPoints']) await services.settings.set(key, '10000');
  }
  await plugin.start!(container);
  const app = createHttpApp({
    container,
    routes: [...plugin.routes!(container), ...(options.routes ?? [])],
    logger: pino({ level: 'silent' }),
    trustProxy: false,
  });
  const server: Server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    container,
    services,
    events,
    close: async () => {
      await plugin.stop!(container);
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

/** A parsed response. */
export interface Reply {
  status: number;
  body: any;  
  headers: Headers;
}

/** Request options of {@link Client.call}. */
export interface CallOptions {
  json?: unknown;
  bearer?: string;
  headers?: Record<string, string>;
  /** Leave out the CSRF header even when the client holds a token. */
  withoutCsrf?: boolean;
}

/** A browser-like client: remembers the session cookie and sends the CSRF token on mutations. */
export class Client {
  cookie: string | undefined;
  csrfToken: string | undefined;
  lastSetCookie: string | undefined;

  constructor(private readonly baseUrl: string) {}

  async call(method: string, path: string, options: CallOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.json !== undefined) headers['content-type'] = 'application/json';
    if (this.cookie) headers.cookie = this.cookie;
    if (options.bearer) headers.authorization = `Bearer ${options.bearer}`;
    if (this.csrfToken && method !== 'GET' && !options.withoutCsrf) headers['x-csrf-token'] = this.csrfToken;
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers,
      body: options.json === undefined ? undefined : JSON.stringify(options.json),
    });
    const setCookie = response.headers.get('set-cookie');
    if (setCookie) {
      this.lastSetCookie = setCookie;
      const [pair] = setCookie.split(';');
      this.cookie = pair && !pair.endsWith('=') ? pair : undefined;
    }
    const text = await response.text();
    const body = text ? JSON.parse(text) : undefined;
    if (body && typeof body === 'object' && typeof body.csrfToken === 'string') this.csrfToken = body.csrfToken;
    return { status: response.status, body, headers: response.headers };
  }

  /** Signs in; throws when it fails so a test does not go on with a half-set-up client. */
  async signIn(email: string, password: string): Promise<Reply> {
    const reply = await this.call('POST', '/api/auth/sign-in', { json: { email, password } });
    if (reply.status !== 200) throw new Error(`sign-in failed: ${reply.status} ${JSON.stringify(reply.body)}`);
    return reply;
  }
}

/** Admin credentials the tests use. */
export const ADMIN = { name: 'Ada Admin', email: 'ada@example.test', password: 'correct horse battery' };

/** Creates the first administrator through `POST /api/auth/setup` and returns a signed-in client. */
export async function setUpAdmin(app: RunningIdentityApp): Promise<Client> {
  const client = new Client(app.url);
  const reply = await client.call('POST', '/api/auth/setup', { json: ADMIN });
  if (reply.status !== 201) throw new Error(`setup failed: ${reply.status} ${JSON.stringify(reply.body)}`);
  return client;
}
