import { fetchKeepingCredentialsHome, type AdapterContext } from '@holdfast/sdk';
import type { OnedriveStorageConfig } from '../config.js';
import { apiErrorOf, ONEDRIVE_ORIGIN } from './errors.js';
import { OAuthTokens } from './oauth.js';

const DEFAULT_API = 'https://graph.microsoft.com/v1.0';
const DEFAULT_AUTH = 'https://login.microsoftonline.com';
/** Asked for when the profile names no scope: offline_access keeps refresh tokens coming. */
export const DEFAULT_SCOPE = 'offline_access Files.ReadWrite';
const THROTTLE_RETRIES = 4;

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

/**
 * A one-piece stream over `bytes` with an explicit Content-Length. fetch() copies a Uint8Array body whole (the spec's
 * "copy of the bytes"), one fragment-sized allocation per request that piles up until a late GC; a stream is sent
 * from the buffer itself. Built anew per attempt, so a retried request can send it again.
 */
function streamOf(bytes: Uint8Array, headers: Record<string, string>): ReadableStream<Uint8Array> {
  headers['content-length'] = String(bytes.length);
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
}

/** The drive path of an item: `root` or `root:/a/b%20c.bin:` (each segment URL-encoded). */
export function itemPath(segments: readonly string[]): string {
  return segments.length === 0 ? 'root' : `root:/${segments.map(encodeURIComponent).join('/')}:`;
}

/** Microsoft Graph's drive API with bearer tokens from the OAUTH profile, renewed once on a 401, throttling retried. */
export class GraphApi {
  readonly tokens: OAuthTokens;
  /** `<graph>/me/drive` or `<graph>/drives/<id>`. */
  readonly drive: string;
  private readonly timeoutMs: number;

  constructor(config: OnedriveStorageConfig, context: AdapterContext) {
    const base = (config.apiBaseUrl ?? DEFAULT_API).replace(/\/+$/, '');
    this.drive = config.driveId ? `${base}/drives/${encodeURIComponent(config.driveId)}` : `${base}/me/drive`;
    this.timeoutMs = config.requestTimeoutSeconds * 1000;
    const scope = context.credentials?.primary?.scope;
    this.tokens = new OAuthTokens({
      origin: ONEDRIVE_ORIGIN,
      vendor: 'Microsoft',
      tokenUrl: `${(config.authBaseUrl ?? DEFAULT_AUTH).replace(/\/+$/, '')}/${encodeURIComponent(config.tenant)}/oauth2/v2.0/token`,
      extraParams: { scope: typeof scope === 'string' && scope !== '' ? scope : DEFAULT_SCOPE },
      context,
    });
  }

  /**
   * One request; `isAuthorized` false for upload URLs, which carry their own credential and may answer 401 to a
   * bearer token. A 401 renews the token once; 429/503 wait for Retry-After and retry.
   */
  async send(url: string, init: RequestInit, options: { signal?: AbortSignal; untilHeaders?: boolean; isAuthorized?: boolean } = {}): Promise<Response> {
    const { signal, isAuthorized = true } = options;
    let renewed = false;
    for (let attempt = 0; ; attempt += 1) {
      const token = isAuthorized ? await this.tokens.accessToken(signal) : undefined;
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(new DOMException('request timed out', 'TimeoutError')), this.timeoutMs);
      timer.unref();
      const headers: Record<string, string> = { ...(init.headers as Record<string, string>) };
      if (token) headers.authorization = `Bearer ${token}`;
      const body = init.body instanceof Uint8Array && init.body.length > 0 ? streamOf(init.body, headers) : init.body;
      let response: Response;
      try {
        response = await fetchKeepingCredentialsHome(url, { ...init, body, duplex: 'half', headers, signal: signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal });
      } finally {
        if (options.untilHeaders) clearTimeout(timer);
      }
      if (response.ok) return response;
      const error = await apiErrorOf(response);
      if (response.status === 401 && token && !renewed) {
        renewed = true;
        if (!(await this.tokens.renewAfterRejection(token, signal))) throw error;
        continue;
      }
      if ((response.status === 429 || response.status === 503) && attempt < THROTTLE_RETRIES) {
        const retryAfter = Number(response.headers.get('retry-after'));
        await sleep((Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter, 60) : 2 ** attempt) * 1000, signal);
        continue;
      }
      throw error;
    }
  }

  /** A JSON call below the drive (`root:/a:`, `root:/a:/children`); `null` for empty answers. */
  async json<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
    const url = /^https?:/.test(path) ? path : path === '' ? this.drive : `${this.drive}/${path}`;
    const response = await this.send(url, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }, { signal });
    const text = await response.text();
    return (text ? JSON.parse(text) : null) as T;
  }
}
