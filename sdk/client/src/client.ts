import createClient, { type Client, type Middleware } from 'openapi-fetch';
import { apiError, HoldfastApiError, HoldfastNetworkError } from './errors.js';
import { runAndWait, waitForExecution, type RunAndWaitOptions } from './run-and-wait.js';
import type { ExecutionEvent, ExecutionView } from './types.js';
import { watchExecution, type WatchOptions } from './watch.js';
import type { paths } from './generated/schema.js';

/** The typed openapi-fetch client: one typed method per HTTP verb, every route of the generated `paths`. */
export type HoldfastApi = Client<paths>;

/** A signed-in browser or Node session: the cookie (Node only; browsers send it themselves) and its CSRF token. */
export interface SessionAuth {
  cookie?: string;
  csrfToken: string;
}

export interface HoldfastClientOptions {
  /** Where the server listens, e.g. `https://backups.example.com` (no `/api`). */
  baseUrl: string;
  /** An API key (`svc_key_...`), sent as `Authorization: Bearer <key>`. */
  apiKey?: string;
  /** A session from `signIn()` or a browser page; mutations carry its CSRF token. */
  session?: SessionAuth;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof globalThis.fetch;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Anything openapi-fetch returns: data on 2xx, error otherwise, and the raw response. */
interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

function authMiddleware(options: HoldfastClientOptions): Middleware {
  return {
    onRequest({ request }) {
      if (options.apiKey) request.headers.set('authorization', `Bearer ${options.apiKey}`);
      if (options.session?.cookie) request.headers.set('cookie', options.session.cookie);
      if (options.session && !SAFE_METHODS.has(request.method)) request.headers.set('x-csrf-token', options.session.csrfToken);
      return request;
    },
    async onResponse({ request, response }) {
      if (!response.ok) throw await apiError(request.method, request.url, response);
      return undefined;
    },
  };
}

/** Wraps fetch so that "no answer at all" becomes a HoldfastNetworkError instead of a bare TypeError. */
export function networkAwareFetch(inner: typeof globalThis.fetch = (...args) => globalThis.fetch(...args)) {
  return async (input: Request): Promise<Response> => {
    try {
      return await inner(input);
    } catch (error) {
      if (error instanceof Error && error.name === 'AbortError') throw error;
      throw new HoldfastNetworkError(new URL(input.url).origin, error);
    }
  };
}

/**
 * The Holdfast client. `api` is the raw typed client (`api.GET('/api/jobs/{id}', { params: { path: { id } } })`);
 * `unwrap()` turns its result into the data or a HoldfastApiError. Helpers: `runAndWait()` and `watch()`.
 */
export class HoldfastClient {
  readonly api: HoldfastApi;
  readonly baseUrl: string;
  readonly fetch: (input: Request) => Promise<Response>;

  constructor(readonly options: HoldfastClientOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.fetch = networkAwareFetch(options.fetch);
    this.api = createClient<paths>({ baseUrl: this.baseUrl, fetch: this.fetch, credentials: 'include' });
    this.api.use(authMiddleware(options));
  }

  /**
   * Awaits an `api.*` call and returns its data. Non-2xx answers never get here: `api` itself throws a
   * HoldfastApiError (status + body), and an unreachable server a HoldfastNetworkError.
   */
  async unwrap<T>(pending: Promise<FetchResult<T>>): Promise<NonNullable<T>> {
    const { data } = await pending;
    return data as NonNullable<T>;
  }

  /** Triggers a job and waits for its execution to end (see RunAndWaitOptions); returns the final execution. */
  runAndWait(jobId: string, options?: RunAndWaitOptions): Promise<ExecutionView> {
    return runAndWait(this, jobId, options);
  }

  /** Waits for an execution that is already running (e.g. one a restore started). */
  waitForExecution(executionId: string, options?: Omit<RunAndWaitOptions, 'lock' | 'onStarted'>): Promise<ExecutionView> {
    return waitForExecution(this, executionId, options);
  }

  /** The progress, log and final status events of an execution, as an async iterable. */
  watch(executionId: string, options?: WatchOptions): AsyncIterable<ExecutionEvent> {
    return watchExecution(this, executionId, options);
  }

  /** Headers for requests made outside `api` (SSE, downloads): the same auth the middleware adds. */
  authHeaders(method = 'GET'): Record<string, string> {
    const headers: Record<string, string> = {};
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    if (this.options.session?.cookie) headers.cookie = this.options.session.cookie;
    if (this.options.session && !SAFE_METHODS.has(method)) headers['x-csrf-token'] = this.options.session.csrfToken;
    return headers;
  }
}

/** Signs in with email and password and returns a client on that session (Node: the cookie is kept here). */
export async function signIn(
  baseUrl: string,
  credentials: { email: string; password: string },
  options: Omit<HoldfastClientOptions, 'baseUrl' | 'apiKey' | 'session'> = {},
): Promise<HoldfastClient> {
  const anonymous = new HoldfastClient({ ...options, baseUrl });
  const { data, response } = await anonymous.api.POST('/api/auth/sign-in', { body: credentials });
  if (!data) throw new HoldfastApiError(response.status, null, 'POST', '/api/auth/sign-in');
  if (!('csrfToken' in data)) {
    // The account has a second factor: a password alone opens no session (docs/api/identity.md, two-factor sign-in).
    throw new Error('This account requires a second factor (TOTP, backup code or passkey); sign in with an API key for scripts');
  }
  const setCookie = response.headers.get('set-cookie');
  const cookie = setCookie ? setCookie.split(';')[0] : undefined;
  return new HoldfastClient({ ...options, baseUrl, session: { cookie, csrfToken: data.csrfToken } });
}
