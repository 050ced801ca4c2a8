import { HoldfastApiError, HoldfastClient, HoldfastNetworkError, type SessionAuth } from '@holdfast/client';

/**
 * The page's session auth. The browser sends the cookie itself; mutations need the CSRF token from sign-in or
 * `GET /api/auth/session`, so the client keeps this object and reads it on every request.
 */
export const session: SessionAuth = { csrfToken: '' };

/**
 * Marks every request made through the typed client, so the end-to-end test can tell them from anything else the
 * page might fetch (it asserts every API call carries it).
 */
export const CLIENT_MARKER_HEADER = 'x-holdfast-web';

function markedFetch(input: Request): Promise<Response> {
  input.headers.set(CLIENT_MARKER_HEADER, '1');
  return globalThis.fetch(input);
}

/** The one API client of the app: same origin, cookie session, typed routes from the server's OpenAPI document. */
export const client = new HoldfastClient({
  baseUrl: window.location.origin,
  session,
  fetch: markedFetch as typeof globalThis.fetch,
});

export const api = client.api;

/** Shorthand: await an `api.*` call and return its data (errors are thrown by the client). */
export function unwrap<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<NonNullable<T>> {
  return client.unwrap(pending);
}

/** The message to show for a failed call: the server's own `error` text when there is one. */
export function errorMessage(error: unknown): string {
  if (error instanceof HoldfastApiError) {
    const body = error.body as { error?: string; issues?: Array<{ path?: unknown; message?: string }> } | null;
    const issues = Array.isArray(body?.issues)
      ? body.issues.map((issue) => `${Array.isArray(issue.path) ? issue.path.join('.') : ''} ${issue.message ?? ''}`.trim()).join('; ')
      : '';
    const base = error.serverMessage ?? body?.error ?? `Request failed with status ${error.status}`;
    return issues && !base.includes(issues) ? `${base} (${issues})` : base;
  }
  if (error instanceof HoldfastNetworkError) return 'The server cannot be reached. Check your connection and try again.';
  if (error instanceof Error) return error.message;
  return String(error);
}

export function isUnauthorized(error: unknown): boolean {
  return error instanceof HoldfastApiError && error.status === 401;
}

/** A 4xx answer: asking again will not change it (permissions, validation, not found, rate limit). */
export function isClientError(error: unknown): boolean {
  return error instanceof HoldfastApiError && error.status >= 400 && error.status < 500;
}
