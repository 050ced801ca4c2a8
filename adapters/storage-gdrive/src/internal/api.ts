import type { AdapterContext } from '@holdfast/sdk';
import type { GdriveStorageConfig } from '../config.js';
import { apiErrorOf, GDRIVE_ORIGIN } from './errors.js';
import { OAuthTokens } from './oauth.js';

const DEFAULT_API = 'https://www.googleapis.com';
const DEFAULT_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const RATE_LIMIT_RETRIES = 4;

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });
}

/** Options of one request. */
export interface SendOptions {
  signal?: AbortSignal;
  /** Stop the timeout once headers arrived (downloads stream longer than any timeout). */
  untilHeaders?: boolean;
  /** Statuses besides 2xx that are answers, not errors (308 Resume Incomplete). */
  accept?: number[];
}

/**
 * A one-piece stream over `bytes` with an explicit Content-Length. fetch() copies a Uint8Array body whole (the spec's
 * "copy of the bytes"), one chunk-sized allocation per request that piles up until a late GC; a stream is sent from
 * the buffer itself. Built anew per attempt, so a retried request can send it again.
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

/** The Drive API v3 with bearer tokens from the OAUTH profile, renewed once on a 401, rate limits retried. */
export class DriveApi {
  readonly tokens: OAuthTokens;
  readonly base: string;
  private readonly timeoutMs: number;

  constructor(config: GdriveStorageConfig, context: AdapterContext) {
    this.base = (config.apiBaseUrl ?? DEFAULT_API).replace(/\/+$/, '');
    this.timeoutMs = config.requestTimeoutSeconds * 1000;
    this.tokens = new OAuthTokens({ origin: GDRIVE_ORIGIN, vendor: 'Google Drive', tokenUrl: config.tokenUrl ?? DEFAULT_TOKEN_URL, context });
  }

  async send(url: string, init: RequestInit, options: SendOptions = {}): Promise<Response> {
    const { signal } = options;
    let renewed = false;
    for (let attempt = 0; ; attempt += 1) {
      const token = await this.tokens.accessToken(signal);
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(new DOMException('request timed out', 'TimeoutError')), this.timeoutMs);
      timer.unref();
      const headers: Record<string, string> = { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}` };
      const body = init.body instanceof Uint8Array && init.body.length > 0 ? streamOf(init.body, headers) : init.body;
      let response: Response;
      try {
        // 308 is Drive's "Resume Incomplete", not a redirect to follow.
        response = await fetch(url, { ...init, body, duplex: 'half', headers, redirect: 'manual', signal: signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal });
      } finally {
        if (options.untilHeaders) clearTimeout(timer);
      }
      if (response.ok || options.accept?.includes(response.status)) return response;
      const error = await apiErrorOf(response);
      if (response.status === 401 && !renewed) {
        renewed = true;
        if (!(await this.tokens.renewAfterRejection(token, signal))) throw error;
        continue;
      }
      const isRateLimited = response.status === 429 || (response.status === 403 && /rateLimitExceeded/i.test(error.reason));
      if (isRateLimited && attempt < RATE_LIMIT_RETRIES) {
        await sleep(2 ** attempt * 1000, signal);
        continue;
      }
      throw error;
    }
  }

  /** A JSON call below /drive/v3 (`files`, `files/<id>`); `null` for 204 answers. */
  async json<T>(method: string, path: string, query: Record<string, string> = {}, body?: unknown, signal?: AbortSignal): Promise<T> {
    const url = `${this.base}/drive/v3/${path}?${new URLSearchParams({ supportsAllDrives: 'true', ...query })}`;
    const response = await this.send(url, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json; charset=UTF-8' },
      body: body === undefined ? undefined : JSON.stringify(body),
    }, { signal });
    const text = await response.text();
    return (text ? JSON.parse(text) : null) as T;
  }

  /** `files/<id>?alt=media`, optionally with an HTTP Range; the body is not read. */
  async media(fileId: string, range: string | undefined, signal?: AbortSignal): Promise<Response> {
    const url = `${this.base}/drive/v3/files/${encodeURIComponent(fileId)}?alt=media&supportsAllDrives=true`;
    return this.send(url, { method: 'GET', headers: range ? { range } : {} }, { signal, untilHeaders: true });
  }
}
