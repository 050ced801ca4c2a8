/**
 * A local FAKE of the Dropbox HTTP API v2, for tests only: no Dropbox server can run here. It follows the documented
 * behaviour (https://www.dropbox.com/developers/documentation/http/documentation) of exactly the endpoints the adapter
 * uses: `oauth2/token` (refresh_token grant), `files/list_folder` (+ `/continue`, paged), `files/get_metadata`,
 * `files/delete_v2`, `files/upload`, `files/upload_session/start|append_v2|finish`, `files/download` (with Range).
 * Errors use Dropbox's shapes: 409 `{ error_summary: "path/not_found/..", error: {...} }`, 401 `expired_access_token`,
 * 400 plain text for bad input. Upload chunks must be multiples of 4 MiB (the rule Dropbox enforces for concurrent
 * sessions; the fake applies it to every session, stricter than Dropbox) and at most 150 MiB per request.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeDropboxStore, fileMetadata } from './store.js';

const MiB = 1024 * 1024;
const CHUNK_UNIT = 4 * MiB;
const MAX_REQUEST = 150 * MiB;

export interface FakeDropboxOptions {
  clientId?: string;
  clientSecret?: string;
  refreshToken?: string;
  /** Lifetime of issued access tokens in seconds (Dropbox: 14400). */
  tokenLifetimeSeconds?: number;
  /** Largest page `files/list_folder` answers, whatever `limit` asks (Dropbox may answer fewer than asked). */
  pageSize?: number;
}

class Reply extends Error {
  constructor(readonly status: number, readonly body: unknown, readonly headers: Record<string, string> = {}) {
    super(`HTTP ${status}`);
  }
}

const conflict = (summary: string, error: unknown) => new Reply(409, { error_summary: `${summary}/..`, error });
const pathNotFound = (tag = 'path') => conflict(`${tag}/not_found/`, { '.tag': tag, [tag]: { '.tag': 'not_found' } });
const badInput = (endpoint: string, text: string) => new Reply(400, `Error in call to API function "${endpoint}": ${text}`);

function headerSafe(value: unknown): string {
  return JSON.stringify(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

async function readBody(request: IncomingMessage, endpoint: string): Promise<Buffer> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const piece of request as AsyncIterable<Buffer>) {
    size += piece.length;
    if (size > MAX_REQUEST) throw badInput(endpoint, 'request body larger than 150 MiB');
    parts.push(piece);
  }
  return Buffer.concat(parts, size);
}

export class FakeDropbox {
  readonly store = new FakeDropboxStore();
  readonly clientId: string;
  readonly clientSecret: string;
  readonly refreshToken: string;
  /** Issued access tokens and their expiry (ms). */
  readonly tokens = new Map<string, number>();
  /** Every API call by endpoint name, in order (`files/upload_session/append_v2`...). */
  readonly calls: string[] = [];
  tokenGrants = 0;
  /** API calls answered 401 (unknown or expired token). */
  rejectedCalls = 0;
  url = '';
  private server?: Server;

  constructor(private readonly options: FakeDropboxOptions = {}) {
    this.clientId = options.clientId ?? 'fake-app-key';
    this.clientSecret = options.clientSecret ?? 'fake-app-secret';
    this.refreshToken = options.refreshToken ?? `fake-refresh-${randomBytes(8).toString('hex')}`;
  }

  async start(): Promise<this> {
    this.server = createServer((request, response) => void this.handle(request, response));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
    this.store.close();
  }

  /** An access token the fake answers with 401 expired_access_token. */
  expiredToken(): string {
    const token = `sl.expired-${randomBytes(8).toString('hex')}`;
    this.tokens.set(token, Date.now() - 1000);
    return token;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const endpoint = (request.url ?? '').replace(/^\/(2\/)?/, '').split('?')[0] ?? '';
    try {
      if (request.method !== 'POST') throw new Reply(405, 'method not allowed');
      if (endpoint === 'oauth2/token') return this.send(response, new Reply(200, await this.grant(await readBody(request, endpoint))));
      this.calls.push(endpoint);
      this.authorize(request.headers.authorization);
      if (endpoint === 'files/download') return await this.download(request, response);
      const isContent = endpoint === 'files/upload' || endpoint.startsWith('files/upload_session/');
      const body = await readBody(request, endpoint);
      const args = isContent ? this.headerArgs(request, endpoint) : this.jsonArgs(request, body, endpoint);
      const result = isContent ? await this.content(endpoint, args, body) : await this.rpc(endpoint, args);
      this.send(response, new Reply(200, result));
    } catch (error) {
      this.send(response, error instanceof Reply ? error : new Reply(500, { error_summary: 'internal_error/', message: String(error) }));
    }
  }

  private send(response: ServerResponse, reply: Reply): void {
    if (response.headersSent) return void response.destroy();
    const isText = typeof reply.body === 'string';
    response.writeHead(reply.status, { 'content-type': isText ? 'text/plain; charset=utf-8' : 'application/json', ...reply.headers });
    response.end(isText ? reply.body : JSON.stringify(reply.body));
  }

  private grant(body: Buffer): Record<string, unknown> {
    const form = new URLSearchParams(body.toString());
    if (form.get('grant_type') !== 'refresh_token') throw new Reply(400, { error: 'unsupported_grant_type', error_description: 'grant_type must be refresh_token here' });
    if (form.get('client_id') !== this.clientId || form.get('client_secret') !== this.clientSecret) {
      throw new Reply(400, { error: 'invalid_client', error_description: 'Invalid client_id or client_secret' });
    }
    if (form.get('refresh_token') !== this.refreshToken) throw new Reply(400, { error: 'invalid_grant', error_description: 'refresh token is invalid or revoked' });
    this.tokenGrants += 1;
    const lifetime = this.options.tokenLifetimeSeconds ?? 14_400;
    const token = `sl.fake-${randomBytes(16).toString('hex')}`;
    this.tokens.set(token, Date.now() + lifetime * 1000);
    return { access_token: token, token_type: 'bearer', expires_in: lifetime };
  }

  private authorize(header: string | undefined): void {
    const token = /^Bearer (.+)$/.exec(header ?? '')?.[1];
    const expiresAt = token ? this.tokens.get(token) : undefined;
    if (expiresAt === undefined || expiresAt < Date.now()) this.rejectedCalls += 1;
    if (expiresAt === undefined) throw new Reply(401, { error_summary: 'invalid_access_token/..', error: { '.tag': 'invalid_access_token' } });
    if (expiresAt < Date.now()) throw new Reply(401, { error_summary: 'expired_access_token/..', error: { '.tag': 'expired_access_token' } });
  }

  private headerArgs(request: IncomingMessage, endpoint: string): Record<string, any> {
    const raw = request.headers['dropbox-api-arg'];
    if (typeof raw !== 'string') throw badInput(endpoint, 'Must provide HTTP header "Dropbox-API-Arg" or URL parameter "arg".');
    if (/[^\u0020-\u007e]/.test(raw)) throw badInput(endpoint, 'HTTP header "Dropbox-API-Arg": could not decode input as JSON');
    try {
      return JSON.parse(raw) as Record<string, any>;
    } catch {
      throw badInput(endpoint, 'HTTP header "Dropbox-API-Arg": could not decode input as JSON');
    }
  }

  private jsonArgs(request: IncomingMessage, body: Buffer, endpoint: string): Record<string, any> {
    if (!String(request.headers['content-type'] ?? '').startsWith('application/json')) {
      throw badInput(endpoint, 'Bad HTTP "Content-Type" header. Expecting one of "application/json", "text/plain; charset=dropbox-cors-hack".');
    }
    try {
      return JSON.parse(body.toString('utf8')) as Record<string, any>;
    } catch {
      throw badInput(endpoint, 'request body: could not decode input as JSON');
    }
  }

  private checkPath(endpoint: string, path: unknown, allowRoot = false): string {
    if (typeof path !== 'string' || (path === '' && !allowRoot) || (path !== '' && (!path.startsWith('/') || path.endsWith('/') || path.includes('//')))) {
      throw badInput(endpoint, `request body: path: 'path' did not match pattern '(/(.|[\\r\\n])*)?|id:.*|(ns:[0-9]+(/.*)?)'`);
    }
    return path;
  }

  private async rpc(endpoint: string, args: Record<string, any>): Promise<unknown> {
    const { store } = this;
    switch (endpoint) {
      case 'files/get_metadata': {
        const path = this.checkPath(endpoint, args.path).toLowerCase();
        const file = store.files.get(path);
        if (file) return fileMetadata(file);
        const folder = store.folders.get(path);
        if (folder !== undefined) return { '.tag': 'folder', name: folder.slice(folder.lastIndexOf('/') + 1), path_lower: path, path_display: folder };
        throw pathNotFound();
      }
      case 'files/delete_v2': {
        const removed = await store.remove(this.checkPath(endpoint, args.path));
        if (!removed) throw pathNotFound('path_lookup');
        return { metadata: removed };
      }
      case 'files/list_folder': {
        const path = this.checkPath(endpoint, args.path, true);
        if (store.files.has(path.toLowerCase())) throw conflict('path/not_folder/', { '.tag': 'path', path: { '.tag': 'not_folder' } });
        if (!store.folders.has(path.toLowerCase())) throw pathNotFound();
        return this.page(store.entriesBelow(path, Boolean(args.recursive)), Number(args.limit ?? 2000));
      }
      case 'files/list_folder/continue': {
        const pending = this.cursors.get(String(args.cursor));
        if (!pending) throw conflict('reset/', { '.tag': 'reset' });
        this.cursors.delete(String(args.cursor));
        return this.page(pending.entries, pending.limit);
      }
      default:
        throw new Reply(404, `Unknown API function: "${endpoint}"`);
    }
  }

  private readonly cursors = new Map<string, { entries: Record<string, unknown>[]; limit: number }>();

  private page(entries: Record<string, unknown>[], limit: number): Record<string, unknown> {
    const size = Math.min(limit, this.options.pageSize ?? 100);
    const cursor = `AAF${randomBytes(12).toString('hex')}`;
    const rest = entries.slice(size);
    if (rest.length > 0) this.cursors.set(cursor, { entries: rest, limit });
    return { entries: entries.slice(0, size), cursor, has_more: rest.length > 0 };
  }

  private async content(endpoint: string, args: Record<string, any>, body: Buffer): Promise<unknown> {
    const { store } = this;
    const checkChunk = (isFinal: boolean) => {
      if (!isFinal && body.length % CHUNK_UNIT !== 0) throw badInput(endpoint, `Chunk size must be a multiple of ${CHUNK_UNIT} bytes, got ${body.length}.`);
    };
    const sessionOf = (cursor: { session_id?: string; offset?: number } | undefined) => {
      const session = store.sessions.get(String(cursor?.session_id));
      if (!session || session.isFinished) throw conflict('lookup_failed/not_found/', { '.tag': 'lookup_failed', lookup_failed: { '.tag': 'not_found' } });
      if (cursor?.offset !== session.offset) {
        throw conflict('lookup_failed/incorrect_offset/', { '.tag': 'lookup_failed', lookup_failed: { '.tag': 'incorrect_offset', correct_offset: session.offset } });
      }
      return session;
    };
    switch (endpoint) {
      case 'files/upload': {
        const path = this.checkPath(endpoint, args.path);
        const session = await store.startSession(body, true);
        session.isFinished = true;
        return fileMetadata(await this.commit(path, session.blob, body.length));
      }
      case 'files/upload_session/start': {
        checkChunk(Boolean(args.close));
        return { session_id: (await store.startSession(body, Boolean(args.close))).id };
      }
      case 'files/upload_session/append_v2': {
        const session = sessionOf(args.cursor);
        if (session.isClosed) throw conflict('lookup_failed/closed/', { '.tag': 'lookup_failed', lookup_failed: { '.tag': 'closed' } });
        checkChunk(Boolean(args.close));
        await store.append(session, body);
        session.isClosed = Boolean(args.close);
        return null;
      }
      case 'files/upload_session/finish': {
        const session = sessionOf(args.cursor);
        const path = this.checkPath(endpoint, args.commit?.path);
        await store.append(session, body);
        session.isFinished = true;
        return fileMetadata(await this.commit(path, session.blob, session.offset));
      }
      default:
        throw new Reply(404, `Unknown API function: "${endpoint}"`);
    }
  }

  private async commit(path: string, blob: string, size: number) {
    if (this.store.folders.has(path.toLowerCase())) throw conflict('path/conflict/folder/', { '.tag': 'path', reason: { '.tag': 'conflict' } });
    return this.store.commit(path, blob, size);
  }

  private async download(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const args = this.headerArgs(request, 'files/download');
    const file = this.store.files.get(this.checkPath('files/download', args.path).toLowerCase());
    if (!file) throw pathNotFound();
    const headers: Record<string, string> = { 'content-type': 'application/octet-stream', 'dropbox-api-result': headerSafe(fileMetadata(file)) };
    const range = /^bytes=(\d+)-(\d*)$/.exec(String(request.headers.range ?? ''));
    let start = 0;
    let end = file.size - 1;
    let status = 200;
    if (request.headers.range) {
      if (!range || Number(range[1]) >= file.size) throw new Reply(416, '', { 'content-range': `bytes */${file.size}` });
      start = Number(range[1]);
      end = range[2] ? Math.min(Number(range[2]), file.size - 1) : file.size - 1;
      status = 206;
      headers['content-range'] = `bytes ${start}-${end}/${file.size}`;
    }
    headers['content-length'] = String(file.size === 0 ? 0 : end - start + 1);
    response.writeHead(status, headers);
    if (file.size === 0) return void response.end();
    createReadStream(file.blob, { start, end }).pipe(response);
  }
}
