import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Readable } from 'node:stream';
import type * as Webdav from 'webdav';
import type { WebDAVClient } from 'webdav';
import type { WebdavStorageConfig } from '../config.js';
import { DavStatusError, isMissing } from './errors.js';

type WebdavModule = typeof Webdav;
let loading: Promise<WebdavModule> | undefined;

/**
 * Loads the `webdav` library on first use, once per process: importing it costs about 5 MiB of RSS (measured with
 * `node --expose-gc`) that a server without a WebDAV destination would otherwise carry from startup.
 */
function loadWebdav(): Promise<WebdavModule> {
  loading ??= import('webdav').catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/** One resource of a PROPFIND answer. */
export interface DavEntry {
  /** Decoded last path segment (`''` for the requested collection itself at the server root). */
  name: string;
  isCollection: boolean;
  size: number;
  modifiedAt: Date;
}

/** Minimal fetch Response shape the webdav client hands back (node-fetch at runtime). */
interface DavResponse {
  status: number;
  body: unknown;
  text(): Promise<string>;
  headers: { get(name: string): string | null };
}

interface SendOptions {
  headers?: Record<string, string>;
  data?: Readable | Buffer | string;
  signal?: AbortSignal;
  /** Metadata requests get the configured timeout; transfers run as long as they need. */
  timed?: boolean;
}

const PROPFIND_BODY =
  '<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/><d:getcontentlength/><d:getlastmodified/></d:prop></d:propfind>';

function encodeSegments(path: string): string {
  return path.split('/').filter(Boolean).map(encodeURIComponent).join('/');
}

function trimSlashes(path: string): string {
  return path.replace(/\/+$/, '');
}

/**
 * Requests to one WebDAV folder (the configured url plus root) through the `webdav` client, which brings digest
 * auth, path encoding and multistatus parsing. Every request goes through `customRequest` and its status is checked
 * here, because the client returns digest 401 answers instead of throwing them.
 */
export class DavSession {
  readonly baseUrl: string;
  private readonly basePath: string;
  private client?: WebDAVClient;
  private readonly agent: HttpAgent | HttpsAgent;

  constructor(private readonly config: WebdavStorageConfig) {
    const root = encodeSegments(config.root);
    this.baseUrl = trimSlashes(config.url) + (root ? `/${root}` : '');
    this.basePath = trimSlashes(decodeURIComponent(new URL(this.baseUrl).pathname));
    // Keep-alive: a listing or a put is many small requests; one TLS handshake each would dominate.
    this.agent = this.baseUrl.startsWith('https:')
      ? new HttpsAgent({ keepAlive: true, rejectUnauthorized: config.rejectUnauthorized })
      : new HttpAgent({ keepAlive: true });
  }

  /** The `webdav` client, created with the first request (the library loads then, see loadWebdav). */
  private async davClient(): Promise<WebDAVClient> {
    const { AuthType, createClient } = await loadWebdav();
    this.client ??= createClient(this.baseUrl, {
      authType: this.config.authType === 'digest' ? AuthType.Digest : AuthType.Password,
      username: this.config.username,
      password: this.config.password,
      httpAgent: this.agent,
      httpsAgent: this.agent,
    });
    return this.client;
  }

  /** Sends one request and returns its response when the status is one of `expected`; throws DavStatusError otherwise. */
  async send(method: string, path: string, expected: number[], options: SendOptions = {}): Promise<DavResponse> {
    // The client first: loading the library must not eat into this request's timeout.
    const client = await this.davClient();
    // node-fetch, given an already aborted signal, destroys the request body with an error nothing listens to: an
    // uncaught exception that would end the process. A cancelled run's next request stops here instead.
    options.signal?.throwIfAborted();
    const timeout = options.timed === false ? undefined : AbortSignal.timeout(this.config.timeoutSeconds * 1000);
    const signals = [options.signal, timeout].filter((signal): signal is AbortSignal => signal !== undefined);
    let response: DavResponse;
    try {
      response = (await client.customRequest(path, {
        method,
        headers: options.headers ?? {},
        data: options.data,
        signal: signals.length > 1 ? AbortSignal.any(signals) : signals[0],
      })) as unknown as DavResponse;
    } catch (error) {
      if (timeout?.aborted && !options.signal?.aborted) throw new Error(`${method} timed out after ${this.config.timeoutSeconds} s`);
      const status = (error as { status?: unknown }).status;
      if (typeof status === 'number') throw new DavStatusError(status, method);
      throw error;
    }
    if (!expected.includes(response.status)) {
      await response.text().catch(() => undefined);
      throw new DavStatusError(response.status, method);
    }
    return response;
  }

  /** PROPFIND with depth 0 (the resource itself) or 1 (a collection's members, without the collection). */
  async propfind(path: string, depth: 0 | 1, signal?: AbortSignal): Promise<DavEntry[]> {
    const response = await this.send('PROPFIND', depth === 1 ? `${trimSlashes(path)}/` : path, [207], {
      headers: { Depth: String(depth), 'Content-Type': 'application/xml; charset=utf-8' },
      data: PROPFIND_BODY,
      signal,
    });
    const { parseXML, prepareFileFromProps } = await loadWebdav();
    const result = await parseXML(await response.text());
    const self = trimSlashes(this.basePath + path);
    const entries: DavEntry[] = [];
    for (const item of result.multistatus.response) {
      const hrefPath = trimSlashes(decodeURIComponent(new URL(String(item.href), this.baseUrl).pathname));
      if (depth === 1 && hrefPath === self) continue;
      const props = item.propstat?.prop;
      if (!props) continue;
      const stat = prepareFileFromProps(props, hrefPath);
      const modified = new Date(String(stat.lastmod));
      entries.push({
        name: hrefPath.slice(hrefPath.lastIndexOf('/') + 1),
        isCollection: stat.type === 'directory',
        size: Number(stat.size) || 0,
        modifiedAt: Number.isNaN(modified.getTime()) ? new Date(0) : modified,
      });
    }
    return entries;
  }

  /** Depth-0 PROPFIND that resolves `undefined` for a missing resource. */
  async statOrMissing(path: string, signal?: AbortSignal): Promise<DavEntry | undefined> {
    try {
      return (await this.propfind(path, 0, signal))[0];
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  /** DELETE that treats a missing resource as done. */
  async removeIfPresent(path: string): Promise<void> {
    await this.send('DELETE', path, [200, 204, 404]);
  }

  /** Streams a body to `path` (created or replaced); resolves when the server confirmed it. */
  async putStream(path: string, body: Readable | Buffer, signal?: AbortSignal): Promise<void> {
    await this.send('PUT', path, [200, 201, 204], {
      headers: { 'Content-Type': 'application/octet-stream' },
      data: body,
      signal,
      timed: false,
    });
  }

  /** Renames within the server, replacing an existing target. */
  async move(from: string, to: string): Promise<void> {
    await this.send('MOVE', from, [201, 204], { headers: { Destination: `${this.baseUrl}/${encodeSegments(to)}`, Overwrite: 'T' } });
  }

  /** GET, optionally of an inclusive byte range; resolves the body stream. */
  async getStream(path: string, range: { start?: number; end?: number }, signal?: AbortSignal): Promise<Readable> {
    const isRanged = range.start !== undefined;
    const headers: Record<string, string> = isRanged ? { Range: `bytes=${range.start}-${range.end ?? ''}` } : {};
    const response = await this.send('GET', path, isRanged ? [206] : [200], { headers, signal, timed: false });
    return response.body as Readable;
  }

  /** Closes idle keep-alive sockets. */
  close(): void {
    this.agent.destroy();
  }
}
