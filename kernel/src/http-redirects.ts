/**
 * Request headers that may follow a redirect to another host: none of them carries a credential. Every other header
 * (Authorization, Cookie, API-key and token headers, a webhook's secret custom headers) is dropped there: a deny-list
 * could never name every secret header a user configures.
 */
export const HEADERS_SAFE_ACROSS_HOSTS: readonly string[] = [
  'accept',
  'accept-encoding',
  'accept-language',
  'cache-control',
  'if-match',
  'if-modified-since',
  'if-none-match',
  'if-range',
  'if-unmodified-since',
  'range',
  'user-agent',
];

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** Redirects followed before giving up, as fetch itself does. */
export const MAX_REDIRECTS = 20;

/**
 * True when a redirect from `from` to `to` stays with the same server: the same origin, or the same host name
 * upgraded from http to https on the default port. Anything else (another host, another port, https to http) is
 * another party.
 */
export function isSameServer(from: URL, to: URL): boolean {
  if (from.origin === to.origin) return true;
  return from.hostname === to.hostname && from.protocol === 'http:' && to.protocol === 'https:' && to.port === '';
}

function isReplayable(body: unknown): boolean {
  return body === undefined || body === null || typeof body === 'string' || body instanceof Uint8Array || body instanceof ArrayBuffer || body instanceof URLSearchParams;
}

/**
 * `fetch` that keeps credentials with the server they were meant for (issue 41: a webhook's `X-Api-Key` and Gotify's
 * `X-Gotify-Key` followed a 302/307 to another host, and the 307 re-sent the body). Redirects are followed here,
 * not by fetch: within the same server as fetch would; to another server only without the body and with no header
 * outside {@link HEADERS_SAFE_ACROSS_HOSTS}, and once stripped the request stays stripped. A 307/308 that would
 * carry the body to another server is not followed: its answer is returned, and the caller reports the status. A
 * caller's own `redirect: 'manual'` or `'error'` is passed through unchanged.
 */
export async function fetchKeepingCredentialsHome(input: string | URL, init: RequestInit = {}): Promise<Response> {
  if (init.redirect === 'manual' || init.redirect === 'error') return fetch(input, init);
  const home = new URL(input);
  let url = home;
  let method = (init.method ?? 'GET').toUpperCase();
  let headers = new Headers(init.headers);
  let body = init.body;
  let isStripped = false;
  for (let hops = 0; ; hops += 1) {
    const response = await fetch(url, { ...init, method, headers, body, redirect: 'manual' });
    const location = response.headers.get('location');
    if (!REDIRECT_STATUSES.has(response.status) || location === null) return response;
    if (hops >= MAX_REDIRECTS) {
      await response.body?.cancel().catch(() => undefined);
      throw new TypeError(`more than ${MAX_REDIRECTS} redirects from ${home.host}`);
    }
    const next = new URL(location, url);
    const keepsBody = response.status === 307 || response.status === 308;
    const hasBody = body !== undefined && body !== null;
    const isAway = isStripped || !isSameServer(home, next);
    // A body is never carried to another server, and a stream cannot be sent twice: the redirect is the answer.
    if (keepsBody && hasBody && (isAway || !isReplayable(body))) return response;
    await response.body?.cancel().catch(() => undefined);
    if (!keepsBody && method !== 'GET' && method !== 'HEAD') {
      // 301/302 after a POST and every 303 become a GET without body, as browsers and fetch do.
      method = 'GET';
      body = undefined;
      for (const name of ['content-type', 'content-length', 'content-encoding', 'content-language', 'content-location']) headers.delete(name);
    }
    if (isAway && !isStripped) {
      const kept = new Headers();
      for (const name of HEADERS_SAFE_ACROSS_HOSTS) {
        const value = headers.get(name);
        if (value !== null) kept.set(name, value);
      }
      headers = kept;
      isStripped = true;
    }
    url = next;
  }
}
