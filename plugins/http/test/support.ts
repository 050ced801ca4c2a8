// Test support: the http plugin composed the way the server composes it (composeHoldfast, whose boot registers the
// core services), next to the sample routes, on an ephemeral port; a stand-in database whose reachability a test
// chooses; a token authenticator; a JSON request helper.
import { composeHoldfast, type ComposedHoldfast, type ComposeOptions } from '@holdfast/boot';
import { TOKENS, type AuthContext, type Authenticator, type RequestInfo } from '@holdfast/kernel';
import { container as rootContainer } from 'tsyringe';
import { createHttpPlugin } from '../src/index.js';
import { ALL_TEST_ROUTES } from './routes.js';

export type RunningApp = ComposedHoldfast & { url: string };

/** The health route only reads `dialect` and calls `isReachable()`; nothing migrates (`migrate: false`). */
function databaseStub(isReachable: () => Promise<boolean>): NonNullable<ComposeOptions['database']> {
  return { dialect: 'postgresql', location: 'stand-in', isReachable, close: async () => undefined } as unknown as NonNullable<ComposeOptions['database']>;
}

export interface StartOptions {
  version: string;
  isReachable?: () => Promise<boolean>;
  authenticator?: Authenticator;
}

/** Composes the http plugin and a plugin serving the sample routes, each call in its own child container. */
export async function startWithPlugin(options: StartOptions): Promise<RunningApp> {
  const container = rootContainer.createChildContainer();
  if (options.authenticator) container.register(TOKENS.Authenticator, { useValue: options.authenticator });
  const composed = await composeHoldfast({
    container,
    plugins: [createHttpPlugin(), { name: 'sample-routes', routes: () => ALL_TEST_ROUTES }],
    core: { runtime: { version: options.version } },
    database: databaseStub(options.isReachable ?? (async () => true)),
    migrate: false,
    http: { port: 0, host: '127.0.0.1', dropConnectionsOnClose: true },
  });
  return { ...composed, url: composed.url! };
}

const IDENTITIES: Record<string, AuthContext> = {
  nobody: { userId: 'u-nobody', permissions: [], isSuperAdmin: false, authMethod: 'session' },
};

/** Knows the bearer tokens of {@link IDENTITIES}; anyone else is anonymous. */
export class FakeAuthenticator implements Authenticator {
  async authenticate(request: RequestInfo): Promise<AuthContext | null> {
    const header = request.headers.authorization;
    const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : undefined;
    return (token && IDENTITIES[token]) || null;
  }
}

/** The parsed JSON of a response. */
export type JsonBody = Record<string, unknown>;

/** Walks a parsed JSON document by keys; undefined when a step is missing. */
export function at(value: unknown, ...keys: string[]): unknown {
  let node = value;
  for (const key of keys) {
    if (typeof node !== 'object' || node === null) return undefined;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}

/** GET helper answering status, headers, raw text and parsed JSON. */
export async function call(url: string, init: { token?: string } = {}): Promise<{ status: number; headers: Headers; body: JsonBody | undefined; text: string }> {
  const headers: Record<string, string> = init.token ? { authorization: `Bearer ${init.token}` } : {};
  const response = await fetch(url, { headers });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  return { status: response.status, headers: response.headers, body: parsed as JsonBody | undefined, text };
}
