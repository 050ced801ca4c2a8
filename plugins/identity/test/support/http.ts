// A real koa app from the http plugin with the identity plugin registered, on an ephemeral port, plus a small
// client that keeps the session cookie and the CSRF token like a browser page would.
import { container as rootContainer, type DependencyContainer } from 'tsyringe';
import { TOKENS, type EventBus, type HoldfastPlugin, type RouteDefinition, type SecretSealer } from '@holdfast/kernel';
import { composeHoldfast } from '@holdfast/boot';
import { createIdentityPlugin, IDENTITY_SERVICES } from '../../src/plugin.js';
import type { IdentityConfig } from '../../src/config.js';
import type { IdentityServices } from '../../src/services.js';
import type { TestDatabase } from './database.js';
import { MemorySettings } from './memory-settings.js';
import { testSealer } from './test-sealer.js';

/** A started app. */
export interface RunningIdentityApp {
  url: string;
  container: DependencyContainer;
  services: IdentityServices;
  /** The settings the app reads through TOKENS.Settings (the catalog's port in the server). */
  settings: MemorySettings;
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
  /** The secret sealer (default: a fresh test sealer with a random key). */
  sealer?: SecretSealer;
  /** Register no sealer (as a server without the catalog plugin). */
  withoutSealer?: boolean;
}

/** Builds and starts the app over `db`. */
export async function startIdentityApp(db: TestDatabase, options: StartOptions = {}): Promise<RunningIdentityApp> {
  const container = rootContainer.createChildContainer();
  // The catalog registers the system-key sealer in the server; TOTP secrets are sealed through it.
  if (!options.withoutSealer) container.register(TOKENS.SecretSealer, { useValue: options.sealer ?? testSealer() });
  const settings = new MemorySettings();
  container.register(TOKENS.Settings, { useValue: settings });
  if (!options.keepDefaultLimits) {
    for (const key of ['authPoints', 'apiPoints', 'mutationPoints']) settings.set(key, '10000');
  }
  const extraRoutes: HoldfastPlugin = { name: 'test-routes', routes: () => options.routes ?? [] };
  const stack = await composeHoldfast({
    plugins: [createIdentityPlugin({ env: options.env ?? {}, config: { ...options.config } }), extraRoutes],
    container,
    database: db.database,
    migrate: false,
    http: { port: 0, host: '127.0.0.1', dropConnectionsOnClose: true },
  });
  return {
    url: stack.url!,
    container,
    services: container.resolve(IDENTITY_SERVICES),
    settings,
    events: container.resolve(TOKENS.EventBus),
    close: () => stack.close(),
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
