import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createThrowawayPostgres, type ThrowawayDatabase } from '@holdfast/tooling/harness/test-site';
import { pino, type Logger } from 'pino';
import { startServer, type ServerHandle } from '../../src/start-server.js';

export const ADMIN = { email: 'admin@example.test', password: 'correct horse battery staple' };

/** One HTTP answer with its parsed JSON body. */
export interface Answer {
  status: number;
  body: any;
  headers: Headers;
}

/** A caller: a Bearer key, or a session cookie with its CSRF token. */
export interface Caller {
  bearer?: string;
  cookie?: string;
  csrf?: string;
}

/** The whole product (every feature plugin, every discovered adapter) on a temp data dir and libsql or PostgreSQL. */
export interface FullServer {
  url: string;
  handle: ServerHandle;
  dataDir: string;
  /** PostgreSQL: the throwaway database the server uses. */
  databaseUrl?: string;
  call(method: string, path: string, caller?: Caller, body?: unknown): Promise<Answer>;
  signIn(email: string, password: string): Promise<Caller>;
  close(): Promise<void>;
}

/** Extras for one suite: more environment (engine timings), and a step on the throwaway database before the start. */
export interface FullServerOptions {
  env?: Record<string, string>;
  /** Where the server logs (default: nowhere). */
  logger?: Logger;
  prepareDatabase?: (databaseUrl: string, databaseName: string) => Promise<void>;
}

export async function startFullServer(dialect: 'sqlite' | 'postgresql', options: FullServerOptions = {}): Promise<FullServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'holdfast-full-'));
  const postgres: ThrowawayDatabase | undefined = dialect === 'postgresql' ? await createThrowawayPostgres() : undefined;
  if (postgres) await options.prepareDatabase?.(postgres.url, postgres.name);
  const handle = await startServer({
    env: {
      PORT: '0',
      HOLDFAST_DATA_DIR: dataDir,
      DATABASE_URL: postgres?.url ?? '',
      // Tests keep their destinations in temp folders; the data dir (also there) stays refused by the rule itself.
      HOLDFAST_LOCAL_ROOTS: tmpdir(),
      ...options.env,
    },
    logger: options.logger ?? pino({ level: 'silent' }),
    host: '127.0.0.1',
  });
  const url = handle.url;
  const call = async (method: string, path: string, caller: Caller = {}, body?: unknown): Promise<Answer> => {
    const headers: Record<string, string> = {};
    if (caller.bearer) headers.authorization = `Bearer ${caller.bearer}`;
    if (caller.cookie) headers.cookie = caller.cookie;
    if (caller.csrf) headers['x-csrf-token'] = caller.csrf;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${url}${path}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON (a stream or an event stream): keep the text
    }
    return { status: response.status, body: parsed, headers: response.headers };
  };
  const signIn = async (email: string, password: string): Promise<Caller> => {
    const response = await fetch(`${url}/api/auth/sign-in`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password }),
    });
    if (response.status !== 200) throw new Error(`sign-in of ${email} failed: ${response.status} ${await response.text()}`);
    const body = (await response.json()) as { csrfToken: string };
    const cookie = (response.headers.get('set-cookie') ?? '').split(';')[0]!;
    return { cookie, csrf: body.csrfToken };
  };
  // The first administrator comes from the setup endpoint, which answers only while no user exists.
  const setup = await fetch(`${url}/api/auth/setup`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Admin', ...ADMIN }),
  });
  if (setup.status !== 201) throw new Error(`setup failed: ${setup.status} ${await setup.text()}`);
  return {
    url,
    handle,
    dataDir,
    databaseUrl: postgres?.url,
    call,
    signIn,
    async close() {
      await handle.close();
      await postgres?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Lifts the rate limits for a suite that sends many requests from one address (the limiter itself is tested elsewhere). */
export async function liftRateLimits(server: FullServer, admin: Caller): Promise<void> {
  const answer = await server.call('PUT', '/api/settings', admin, {
    authPoints: 10_000,
    apiPoints: 100_000,
    mutationPoints: 100_000,
  });
  if (answer.status !== 200) throw new Error(`could not lift rate limits: ${answer.status} ${JSON.stringify(answer.body)}`);
  // The limiter re-reads settings through a 5 s cache (a change applies without restart, not within the same second).
  await new Promise((resolve) => setTimeout(resolve, 5_500));
}
