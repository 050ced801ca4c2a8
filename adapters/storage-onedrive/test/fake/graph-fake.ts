/**
 * A local FAKE of Microsoft Graph's drive API and the Microsoft identity platform token endpoint, for tests only: no
 * OneDrive server can run here. It follows the documented behaviour (learn.microsoft.com: driveitem-get,
 * driveitem-list-children, driveitem-get-content, driveitem-put-content, driveitem-delete, driveitem-createuploadsession,
 * "Refresh the access token") of exactly what the adapter uses:
 * - token: refresh_token grant that ROTATES the refresh token (the old one is revoked here, stricter than Microsoft, so
 *   a test proves the rotated token was written back); `invalid_grant` 400 / `invalid_client` 401 bodies.
 * - `GET /me/drive`, `GET root:/path:`, `GET root:/path:/children` with `$top` and `@odata.nextLink` paging,
 *   `GET root:/path:/content` answering 302 to a pre-authenticated download URL that honours Range (206),
 *   `PUT root:/path:/content` (simple upload), `DELETE root:/path:`; `{ error: { code: "itemNotFound" } }` 404s and
 *   `InvalidAuthenticationToken` 401s.
 * - `createUploadSession` (conflictBehavior replace) answering `uploadUrl`; fragment PUTs WITHOUT Authorization (one
 *   with it gets 401, as the docs warn), `Content-Range: bytes a-b/total` with a fixed total (`*` refused, as OneDrive
 *   does), fragments a multiple of 320 KiB except the last and at most 60 MiB, 202 with `nextExpectedRanges` until the
 *   last byte, then 201/200 with the item; `DELETE uploadUrl` cancels (204). The file appears only on completion.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { truncate, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { driveItem, FakeGraphStore, isValidName, type FakeItem } from './graph-store.js';

const UNIT = 320 * 1024;
const MAX_FRAGMENT = 60 * 1024 * 1024;

export interface FakeUploadSession {
  id: string;
  path: string;
  total?: number;
  received: number;
  blob: string;
  state: 'open' | 'done' | 'cancelled';
}

class Reply extends Error {
  constructor(readonly status: number, readonly body: unknown, readonly headers: Record<string, string> = {}) {
    super(`HTTP ${status}`);
  }
}

const graphError = (status: number, code: string, message: string) => new Reply(status, { error: { code, message, innerError: { date: new Date().toISOString(), 'request-id': randomBytes(8).toString('hex') } } });
const notFound = () => graphError(404, 'itemNotFound', 'The resource could not be found.');

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const piece of request as AsyncIterable<Buffer>) parts.push(piece);
  return Buffer.concat(parts);
}

/** Appends a request body to a file without holding it in memory (the suite measures this process's memory). */
async function appendStream(request: IncomingMessage, path: string): Promise<number> {
  let length = 0;
  const counter = new Transform({
    transform(piece: Buffer, _encoding, callback) {
      length += piece.length;
      callback(null, piece);
    },
  });
  await pipeline(request, counter, createWriteStream(path, { flags: 'a' }));
  return length;
}

export class FakeGraph {
  readonly store = new FakeGraphStore();
  readonly clientId = randomBytes(16).toString('hex');
  readonly clientSecret = `fake~${randomBytes(12).toString('hex')}`;
  /** The currently valid refresh token (rotated by every grant). */
  refreshToken = `M.C5-fake-${randomBytes(12).toString('hex')}`;
  readonly tokens = new Map<string, number>();
  readonly sessions = new Map<string, FakeUploadSession>();
  readonly calls: string[] = [];
  /** Scopes asked for in refresh requests. */
  readonly scopes: string[] = [];
  tokenGrants = 0;
  rejectedCalls = 0;
  url = '';
  private server?: Server;
  private readonly pages = new Map<string, FakeItem[]>();

  constructor(private readonly options: { pageSize?: number; tokenLifetimeSeconds?: number } = {}) {}

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

  expiredToken(): string {
    const token = `eyJ0eXAi.expired-${randomBytes(8).toString('hex')}`;
    this.tokens.set(token, Date.now() - 1000);
    return token;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.url);
    try {
      if (request.method === 'POST' && /^\/[^/]+\/oauth2\/v2\.0\/token$/.test(url.pathname)) return this.send(response, this.grant(await readBody(request)));
      const upload = /^\/upload\/([^/]+)$/.exec(url.pathname);
      if (upload) return this.send(response, await this.fragment(request, upload[1]!));
      const download = /^\/download\/([^/]+)$/.exec(url.pathname);
      if (download) return this.download(request, response, download[1]!);
      const drive = /^\/v1\.0\/(?:me\/drive|drives\/[^/]+)(?:\/(.*))?$/.exec(url.pathname);
      if (!drive) throw graphError(400, 'BadRequest', `Resource not found for the segment '${url.pathname}'.`);
      this.calls.push(`${request.method} ${drive[1] ?? ''}`);
      this.authorize(request.headers.authorization);
      this.send(response, await this.driveCall(request, url, drive[1] ?? ''));
    } catch (error) {
      this.send(response, error instanceof Reply ? error : graphError(500, 'generalException', String(error)));
    }
  }

  private send(response: ServerResponse, reply: Reply): void {
    if (response.headersSent) return void response.destroy();
    if (reply.body === null) {
      response.writeHead(reply.status, reply.headers);
      return void response.end();
    }
    response.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
    response.end(JSON.stringify(reply.body));
  }

  private grant(body: Buffer): Reply {
    const form = new URLSearchParams(body.toString());
    if (form.get('client_id') !== this.clientId || form.get('client_secret') !== this.clientSecret) {
      return new Reply(401, { error: 'invalid_client', error_description: 'AADSTS7000215: Invalid client secret provided. Ensure the secret being sent in the request is the client secret value, not the client secret ID.', error_codes: [7000215] });
    }
    if (!form.get('scope')) return new Reply(400, { error: 'invalid_request', error_description: "AADSTS900144: The request body must contain the following parameter: 'scope'.", error_codes: [900144] });
    if (form.get('grant_type') !== 'refresh_token' || form.get('refresh_token') !== this.refreshToken) {
      return new Reply(400, { error: 'invalid_grant', error_description: "AADSTS70000: The provided value for the 'refresh_token' is not valid.", error_codes: [70000] });
    }
    this.tokenGrants += 1;
    this.scopes.push(form.get('scope')!);
    this.refreshToken = `M.C5-fake-${randomBytes(12).toString('hex')}`;
    const lifetime = this.options.tokenLifetimeSeconds ?? 3600;
    const token = `eyJ0eXAi.fake-${randomBytes(16).toString('hex')}`;
    this.tokens.set(token, Date.now() + lifetime * 1000);
    return new Reply(200, { token_type: 'Bearer', scope: form.get('scope'), expires_in: lifetime, ext_expires_in: lifetime, access_token: token, refresh_token: this.refreshToken });
  }

  private authorize(header: string | undefined): void {
    const token = /^Bearer (.+)$/.exec(header ?? '')?.[1];
    const expiresAt = token ? this.tokens.get(token) : undefined;
    if (expiresAt === undefined || expiresAt < Date.now()) {
      this.rejectedCalls += 1;
      const message = expiresAt === undefined ? 'IDX14100: JWT is not well formed, there are no dots (.).' : 'Lifetime validation failed, the token is expired.';
      throw graphError(401, 'InvalidAuthenticationToken', message);
    }
  }

  /** `root`, `root:/a/b:` or `root:/a/b:/suffix` → [path, suffix]. */
  private address(rest: string): [string, string] {
    if (rest === 'root' || rest.startsWith('root/')) return ['', rest.slice(4)];
    const match = /^root:\/([^:]*):?(\/.*)?$/.exec(rest);
    if (!match) throw graphError(400, 'invalidRequest', 'Invalid request');
    const segments = match[1]!.split('/').map(decodeURIComponent);
    if (segments.some((segment) => !isValidName(segment))) throw graphError(400, 'invalidRequest', 'The provided name contains invalid characters.');
    return [segments.join('/'), match[2] ?? ''];
  }

  private async driveCall(request: IncomingMessage, url: URL, rest: string): Promise<Reply> {
    if (rest === '' && request.method === 'GET') return new Reply(200, { id: 'fake-drive', driveType: 'personal', quota: { total: 5e12, used: 0, remaining: 5e12, state: 'normal' } });
    const [path, suffix] = this.address(rest);
    const item = this.store.get(path);
    const key = `${request.method} ${suffix}`;
    if (key === 'GET ') {
      if (!item) throw notFound();
      return new Reply(200, driveItem(item, this.url));
    }
    if (key === 'DELETE ') {
      if (!(await this.store.remove(path))) throw notFound();
      return new Reply(204, null);
    }
    if (key === 'GET /children') return this.children(url, path, item);
    if (key === 'GET /content') {
      if (!item || item.isFolder) throw notFound();
      return new Reply(302, null, { location: `${this.url}/download/${item.id}?tempauth=${randomBytes(8).toString('hex')}` });
    }
    if (key === 'PUT /content') {
      const blob = this.store.blobPath();
      await writeFile(blob, '');
      const size = await appendStream(request, blob);
      if (item?.isFolder || !this.store.ensureParents(path)) throw graphError(409, 'nameAlreadyExists', 'An item with the same name already exists under the parent');
      const isNew = !item;
      return new Reply(isNew ? 201 : 200, driveItem(await this.store.commit(path, blob, size), this.url));
    }
    if (key === 'POST /createUploadSession') {
      const body = JSON.parse((await readBody(request)).toString() || '{}') as { item?: Record<string, unknown> };
      if (item?.isFolder) throw graphError(409, 'nameAlreadyExists', 'An item with the same name already exists under the parent');
      if (item && body.item?.['@microsoft.graph.conflictBehavior'] === 'fail') throw graphError(409, 'nameAlreadyExists', 'The specified item name already exists.');
      const session: FakeUploadSession = { id: randomBytes(16).toString('hex'), path, received: 0, blob: this.store.blobPath(), state: 'open' };
      await writeFile(session.blob, '');
      this.sessions.set(session.id, session);
      return new Reply(200, { uploadUrl: `${this.url}/upload/${session.id}`, expirationDateTime: new Date(Date.now() + 86_400_000).toISOString(), nextExpectedRanges: ['0-'] });
    }
    throw graphError(400, 'invalidRequest', `unsupported by the fake: ${key}`);
  }

  private children(url: URL, path: string, item: FakeItem | undefined): Reply {
    const skip = url.searchParams.get('$skiptoken');
    let items: FakeItem[];
    if (skip) {
      const pending = this.pages.get(skip);
      if (!pending) throw graphError(400, 'invalidRequest', 'Invalid skip token');
      this.pages.delete(skip);
      items = pending;
    } else {
      if (!item) throw notFound();
      if (!item.isFolder) throw graphError(400, 'invalidRequest', 'The item is not a folder');
      items = this.store.children(path);
    }
    const size = Math.min(Number(url.searchParams.get('$top') ?? 200), this.options.pageSize ?? 200);
    const rest = items.slice(size);
    const reply: Record<string, unknown> = { value: items.slice(0, size).map((child) => driveItem(child, this.url)) };
    if (rest.length > 0) {
      const token = randomBytes(8).toString('hex');
      this.pages.set(token, rest);
      const next = new URL(url);
      next.searchParams.set('$skiptoken', token);
      reply['@odata.nextLink'] = next.toString();
    }
    return new Reply(200, reply);
  }

  private download(request: IncomingMessage, response: ServerResponse, id: string): void {
    const item = this.store.byId(id);
    if (!item?.blob) return this.send(response, notFound());
    const range = /^bytes=(\d+)-(\d*)$/.exec(String(request.headers.range ?? ''));
    let [start, end, status] = [0, item.size - 1, 200];
    const headers: Record<string, string> = { 'content-type': 'application/octet-stream' };
    if (request.headers.range) {
      if (!range || Number(range[1]) >= item.size) return this.send(response, new Reply(416, null, { 'content-range': `bytes */${item.size}` }));
      [start, end, status] = [Number(range[1]), range[2] ? Math.min(Number(range[2]), item.size - 1) : item.size - 1, 206];
      headers['content-range'] = `bytes ${start}-${end}/${item.size}`;
    }
    headers['content-length'] = String(item.size === 0 ? 0 : end - start + 1);
    response.writeHead(status, headers);
    if (item.size === 0) return void response.end();
    createReadStream(item.blob, { start, end }).pipe(response);
  }

  private async fragment(request: IncomingMessage, id: string): Promise<Reply> {
    const session = this.sessions.get(id);
    if (!session || session.state !== 'open') throw graphError(404, 'itemNotFound', 'The upload session was not found.');
    this.calls.push(`${request.method} uploadUrl`);
    if (request.headers.authorization) throw graphError(401, 'unauthenticated', 'Do not send an Authorization header to the upload URL.');
    if (request.method === 'DELETE') {
      session.state = 'cancelled';
      return new Reply(204, null);
    }
    const range = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(String(request.headers['content-range'] ?? ''));
    if (request.method !== 'PUT' || !range) throw graphError(400, 'invalidRequest', 'The Content-Range header is missing or malformed.');
    const [start, end, total] = [Number(range[1]), Number(range[2]), Number(range[3])];
    if (session.total !== undefined && session.total !== total) throw graphError(400, 'invalidRequest', `The current upload session is for ${session.total} total bytes, but the current fragment declares a total of ${total}.`);
    if (start !== session.received) throw graphError(416, 'invalidRange', 'The uploaded fragment overlaps with data that has already been received.');
    const length = await appendStream(request, session.blob);
    const reject = async (status: number, code: string, message: string) => {
      await truncate(session.blob, session.received);
      return graphError(status, code, message);
    };
    if (end - start + 1 !== length) throw await reject(400, 'invalidRequest', 'The Content-Range header length does not match the provided number of bytes.');
    if (length > MAX_FRAGMENT) throw await reject(413, 'requestTooLarge', 'The fragment is larger than 60 MiB.');
    const isLast = end + 1 === total;
    if (!isLast && length % UNIT !== 0) throw await reject(400, 'invalidRequest', `Fragments must be a multiple of ${UNIT} bytes (320 KiB) except the last.`);
    session.total = total;
    session.received += length;
    if (!isLast) return new Reply(202, { expirationDateTime: new Date(Date.now() + 86_400_000).toISOString(), nextExpectedRanges: [`${session.received}-${total - 1}`] });
    session.state = 'done';
    const existed = this.store.get(session.path) !== undefined;
    if (!this.store.ensureParents(session.path)) throw graphError(409, 'nameAlreadyExists', 'A parent of the path is a file');
    return new Reply(existed ? 200 : 201, driveItem(await this.store.commit(session.path, session.blob, total), this.url));
  }
}
