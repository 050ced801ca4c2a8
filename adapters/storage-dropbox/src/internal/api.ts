import { fetchKeepingCredentialsHome, type AdapterContext } from '@holdfast/sdk';
import type { DropboxStorageConfig } from '../config.js';
import { apiErrorOf, DROPBOX_ORIGIN } from './errors.js';
import { OAuthTokens } from './oauth.js';

const DEFAULT_API = 'https://api.dropboxapi.com';
const DEFAULT_CONTENT = 'https://content.dropboxapi.com';
const DEFAULT_TOKEN_URL = 'https://api.dropboxapi.com/oauth2/token';
/** 429 answers (write lock contention, rate limits) are retried this often, waiting Retry-After. */
const RATE_LIMIT_RETRIES = 4;

/**
 * `Dropbox-API-Arg` must be "HTTP header safe" JSON: every character above 0x7E escaped as \uXXXX (the docs'
 * rule), otherwise a unicode path is mangled or rejected.
 */
export function headerSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

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

/** The Dropbox HTTP API v2 with bearer tokens from the OAUTH profile, renewed once on a 401. */
export class DropboxApi {
  readonly tokens: OAuthTokens;
  private readonly apiBase: string;
  private readonly contentBase: string;
  private readonly timeoutMs: number;

  constructor(config: DropboxStorageConfig, context: AdapterContext) {
    this.apiBase = (config.apiBaseUrl ?? DEFAULT_API).replace(/\/+$/, '');
    this.contentBase = (config.contentBaseUrl ?? DEFAULT_CONTENT).replace(/\/+$/, '');
    this.timeoutMs = config.requestTimeoutSeconds * 1000;
    this.tokens = new OAuthTokens({ origin: DROPBOX_ORIGIN, vendor: 'Dropbox', tokenUrl: config.tokenUrl ?? DEFAULT_TOKEN_URL, context });
  }

  /**
   * Sends one request with a bearer token. A 401 renews the token once and retries; a 429 waits and retries.
   * `untilHeaders` stops the timeout once the answer's headers arrived (downloads stream longer than any timeout).
   */
  private async send(url: string, init: RequestInit, signal: AbortSignal | undefined, untilHeaders = false): Promise<Response> {
    let renewed = false;
    for (let attempt = 0; ; attempt += 1) {
      const token = await this.tokens.accessToken(signal);
      const timeout = new AbortController();
      const timer = setTimeout(() => timeout.abort(new DOMException('request timed out', 'TimeoutError')), this.timeoutMs);
      // Unref'd and, except for downloads, left running: it also bounds reading the answer's body; firing after
      // the request finished does nothing.
      timer.unref();
      const headers: Record<string, string> = { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}` };
      const body = init.body instanceof Uint8Array && init.body.length > 0 ? streamOf(init.body, headers) : init.body;
      let response: Response;
      try {
        response = await fetchKeepingCredentialsHome(url, { ...init, body, duplex: 'half', headers, signal: signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal });
      } finally {
        if (untilHeaders) clearTimeout(timer);
      }
      if (response.status === 401 && !renewed) {
        renewed = true;
        const error = await apiErrorOf(response);
        if (!(await this.tokens.renewAfterRejection(token, signal))) throw error;
        continue;
      }
      if (response.status === 429 && attempt < RATE_LIMIT_RETRIES) {
        await response.body?.cancel();
        const retryAfter = Number(response.headers.get('retry-after'));
        await sleep((Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter, 30) : 2 ** attempt) * 1000, signal);
        continue;
      }
      if (!response.ok) throw await apiErrorOf(response);
      return response;
    }
  }

  /** An RPC endpoint (`files/get_metadata`...): JSON in, JSON out. */
  async rpc<T>(endpoint: string, args: unknown, signal?: AbortSignal): Promise<T> {
    const response = await this.send(`${this.apiBase}/2/${endpoint}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(args),
    }, signal);
    return (await response.json()) as T;
  }

  /** A content-upload endpoint: arguments in `Dropbox-API-Arg`, the bytes as the body, JSON out. */
  async upload<T>(endpoint: string, args: unknown, body: Uint8Array, signal?: AbortSignal): Promise<T> {
    const response = await this.send(`${this.contentBase}/2/${endpoint}`, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream', 'dropbox-api-arg': headerSafeJson(args) },
      body,
    }, signal);
    const text = await response.text();
    return (text ? JSON.parse(text) : null) as T;
  }

  /** `files/download` of a path, optionally a byte range (HTTP Range, answered 206); the body is not read. */
  async download(path: string, range: string | undefined, signal?: AbortSignal): Promise<Response> {
    const headers: Record<string, string> = { 'dropbox-api-arg': headerSafeJson({ path }) };
    if (range) headers.range = range;
    return this.send(`${this.contentBase}/2/files/download`, { method: 'POST', headers }, signal, true);
  }
}
