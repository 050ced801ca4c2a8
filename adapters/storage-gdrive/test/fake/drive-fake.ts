/**
 * A local FAKE of the Google Drive API v3, for tests only: no Drive server can run here. It follows the documented
 * behaviour (https://developers.google.com/workspace/drive/api/guides/manage-uploads, /reference/rest/v3/files) of
 * exactly what the adapter uses: the OAuth token endpoint (refresh_token grant; `invalid_grant`, `invalid_client`),
 * `files.list` (q subset, `pageToken` paging), `files.create` (folders), `files.get?alt=media` with Range (206),
 * `files.delete`, and resumable uploads (`uploadType=resumable` POST / PATCH answering a session URI in `Location`,
 * chunk PUTs with `Content-Range`, 308 Resume Incomplete with `Range`, chunks a multiple of 256 KiB except the last).
 * Errors use Drive's JSON shape `{ error: { code, message, errors: [{ reason }] } }` (404 notFound, 401 authError).
 * Cancelling a session with DELETE on its URI answers 499 as Google's resumable protocol does; the Drive guide does
 * not document cancelling, so this part is the fake's assumption.
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { truncate, writeFile } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { FakeDriveStore, newId, parseQuery, type FakeDriveFile } from './drive-store.js';

const CHUNK_UNIT = 256 * 1024;

export interface FakeDriveOptions {
  tokenLifetimeSeconds?: number;
  /** Largest page `files.list` answers, whatever `pageSize` asks. */
  pageSize?: number;
}

export interface FakeUploadSession {
  id: string;
  target: { fileId?: string; name?: string; parents?: string[] };
  received: number;
  blob: string;
  state: 'open' | 'done' | 'cancelled';
}

class Reply extends Error {
  constructor(readonly status: number, readonly body: unknown, readonly headers: Record<string, string> = {}) {
    super(`HTTP ${status}`);
  }
}

const driveError = (code: number, reason: string, message: string, extra: Record<string, string> = {}) =>
  new Reply(code, { error: { code, message, errors: [{ domain: 'global', reason, message, ...extra }] } });

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const piece of request as AsyncIterable<Buffer>) parts.push(piece);
  return Buffer.concat(parts);
}

/** Appends a request body to a file without holding it in memory; answers its length. */
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

function view(file: FakeDriveFile): Record<string, unknown> {
  return { kind: 'drive#file', id: file.id, name: file.name, mimeType: file.mimeType, parents: file.parents, size: file.mimeType.startsWith('application/vnd.google-apps') ? undefined : String(file.size), createdTime: file.createdTime, modifiedTime: file.modifiedTime, md5Checksum: undefined };
}

export class FakeDrive {
  readonly store = new FakeDriveStore();
  readonly clientId = `fake-${randomBytes(4).toString('hex')}.apps.googleusercontent.com`;
  readonly clientSecret = `GOCSPX-${randomBytes(8).toString('hex')}`;
  readonly refreshToken = `1//fake-${randomBytes(12).toString('hex')}`;
  readonly tokens = new Map<string, number>();
  readonly sessions = new Map<string, FakeUploadSession>();
  /** Every API request as `METHOD path`, in order. */
  readonly calls: string[] = [];
  tokenGrants = 0;
  rejectedCalls = 0;
  url = '';
  private server?: Server;
  private readonly pages = new Map<string, FakeDriveFile[]>();

  constructor(private readonly options: FakeDriveOptions = {}) {}

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
    const token = `ya29.expired-${randomBytes(8).toString('hex')}`;
    this.tokens.set(token, Date.now() - 1000);
    return token;
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const url = new URL(request.url ?? '/', this.url);
    try {
      if (url.pathname === '/token' && request.method === 'POST') return this.send(response, new Reply(200, this.grant(await readBody(request))));
      this.calls.push(`${request.method} ${url.pathname}${url.searchParams.has('upload_id') ? ' (session)' : ''}`);
      this.authorize(request.headers.authorization);
      if (url.pathname.startsWith('/upload/drive/v3/files')) return this.send(response, await this.upload(request, url));
      const match = /^\/drive\/v3\/files(?:\/([^/]+))?$/.exec(url.pathname);
      if (!match) throw driveError(404, 'notFound', 'Not Found');
      const id = match[1] ? decodeURIComponent(match[1]) : undefined;
      if (id && request.method === 'GET' && url.searchParams.get('alt') === 'media') return this.media(request, response, id);
      this.send(response, await this.files(request, url, id));
    } catch (error) {
      this.send(response, error instanceof Reply ? error : driveError(500, 'backendError', String(error)));
    }
  }

  private send(response: ServerResponse, reply: Reply): void {
    if (response.headersSent) return void response.destroy();
    if (reply.body === null) {
      response.writeHead(reply.status, reply.headers);
      return void response.end();
    }
    response.writeHead(reply.status, { 'content-type': 'application/json; charset=UTF-8', ...reply.headers });
    response.end(JSON.stringify(reply.body));
  }

  private grant(body: Buffer): Record<string, unknown> {
    const form = new URLSearchParams(body.toString());
    if (form.get('client_id') !== this.clientId || form.get('client_secret') !== this.clientSecret) {
      throw new Reply(401, { error: 'invalid_client', error_description: 'The OAuth client was not found.' });
    }
    if (form.get('grant_type') !== 'refresh_token' || form.get('refresh_token') !== this.refreshToken) {
      throw new Reply(400, { error: 'invalid_grant', error_description: 'Token has been expired or revoked.' });
    }
    this.tokenGrants += 1;
    const lifetime = this.options.tokenLifetimeSeconds ?? 3599;
    const token = `ya29.fake-${randomBytes(16).toString('hex')}`;
    this.tokens.set(token, Date.now() + lifetime * 1000);
    return { access_token: token, expires_in: lifetime, scope: 'https://www.googleapis.com/auth/drive.file', token_type: 'Bearer' };
  }

  private authorize(header: string | undefined): void {
    const token = /^Bearer (.+)$/.exec(header ?? '')?.[1];
    const expiresAt = token ? this.tokens.get(token) : undefined;
    if (expiresAt === undefined || expiresAt < Date.now()) {
      this.rejectedCalls += 1;
      throw new Reply(401, {
        error: {
          code: 401,
          message: 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
          errors: [{ message: 'Invalid Credentials', domain: 'global', reason: 'authError', location: 'Authorization', locationType: 'header' }],
          status: 'UNAUTHENTICATED',
        },
      }, { 'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"' });
    }
  }

  private fileOr404(id: string): FakeDriveFile {
    const file = this.store.files.get(id);
    if (!file || file.trashed) throw driveError(404, 'notFound', `File not found: ${id}.`, { locationType: 'parameter', location: 'fileId' });
    return file;
  }

  private async files(request: IncomingMessage, url: URL, id: string | undefined): Promise<Reply> {
    if (!id && request.method === 'GET') return new Reply(200, this.list(url));
    if (!id && request.method === 'POST') {
      const meta = JSON.parse((await readBody(request)).toString() || '{}') as { name?: string; mimeType?: string; parents?: string[] };
      for (const parent of meta.parents ?? []) this.fileOr404(parent);
      return new Reply(200, view(this.store.create({ name: meta.name ?? 'Untitled', mimeType: meta.mimeType, parents: meta.parents })));
    }
    if (id && request.method === 'GET') return new Reply(200, view(this.fileOr404(id)));
    if (id && request.method === 'DELETE') {
      this.fileOr404(id);
      await this.store.remove(id);
      return new Reply(204, null);
    }
    throw driveError(405, 'methodNotAllowed', 'Method not allowed');
  }

  private list(url: URL): Record<string, unknown> {
    const pageToken = url.searchParams.get('pageToken');
    let files: FakeDriveFile[];
    if (pageToken) {
      const pending = this.pages.get(pageToken);
      if (!pending) throw driveError(400, 'invalid', 'Invalid Value', { locationType: 'parameter', location: 'pageToken' });
      this.pages.delete(pageToken);
      files = pending;
    } else {
      const clause = parseQuery(url.searchParams.get('q') ?? '');
      if (!clause) throw driveError(400, 'invalid', 'Invalid Value', { locationType: 'parameter', location: 'q' });
      files = this.store.query(clause, url.searchParams.get('orderBy') ?? undefined);
    }
    const requested = Number(url.searchParams.get('pageSize') ?? 100);
    if (!Number.isInteger(requested) || requested < 1 || requested > 1000) throw driveError(400, 'invalid', 'Invalid Value', { location: 'pageSize' });
    const size = Math.min(requested, this.options.pageSize ?? 1000);
    const rest = files.slice(size);
    const next = rest.length > 0 ? newId() : undefined;
    if (next) this.pages.set(next, rest);
    return { kind: 'drive#fileList', incompleteSearch: false, files: files.slice(0, size).map(view), ...(next ? { nextPageToken: next } : {}) };
  }

  private media(request: IncomingMessage, response: ServerResponse, id: string): void {
    const file = this.fileOr404(id);
    if (!file.blob) throw driveError(403, 'fileNotDownloadable', 'Only files with binary content can be downloaded.');
    const range = /^bytes=(\d+)-(\d*)$/.exec(String(request.headers.range ?? ''));
    let [start, end, status] = [0, file.size - 1, 200];
    const headers: Record<string, string> = { 'content-type': file.mimeType };
    if (request.headers.range) {
      if (!range || Number(range[1]) >= file.size) throw new Reply(416, { error: { code: 416, message: 'Request range not satisfiable', errors: [{ reason: 'requestedRangeNotSatisfiable' }] } });
      [start, end, status] = [Number(range[1]), range[2] ? Math.min(Number(range[2]), file.size - 1) : file.size - 1, 206];
      headers['content-range'] = `bytes ${start}-${end}/${file.size}`;
    }
    headers['content-length'] = String(file.size === 0 ? 0 : end - start + 1);
    response.writeHead(status, headers);
    if (file.size === 0) return void response.end();
    createReadStream(file.blob, { start, end }).pipe(response);
  }

  private async upload(request: IncomingMessage, url: URL): Promise<Reply> {
    const sessionId = url.searchParams.get('upload_id');
    if (sessionId) return this.chunk(request, sessionId);
    if (url.searchParams.get('uploadType') !== 'resumable') throw driveError(400, 'invalid', 'Only uploadType=resumable is implemented by this fake');
    const id = /^\/upload\/drive\/v3\/files(?:\/([^/]+))?$/.exec(url.pathname)?.[1];
    const meta = JSON.parse((await readBody(request)).toString() || '{}') as { name?: string; parents?: string[] };
    if (request.method === 'PATCH' && id) this.fileOr404(decodeURIComponent(id));
    else if (request.method === 'POST' && !id) for (const parent of meta.parents ?? []) this.fileOr404(parent);
    else throw driveError(405, 'methodNotAllowed', 'Method not allowed');
    const session: FakeUploadSession = {
      id: newId(),
      target: id ? { fileId: decodeURIComponent(id) } : { name: meta.name ?? 'Untitled', parents: meta.parents },
      received: 0,
      blob: this.store.blobPath(),
      state: 'open',
    };
    await writeFile(session.blob, '');
    this.sessions.set(session.id, session);
    return new Reply(200, null, { location: `${this.url}/upload/drive/v3/files?uploadType=resumable&upload_id=${session.id}`, 'content-length': '0' });
  }

  private async chunk(request: IncomingMessage, sessionId: string): Promise<Reply> {
    const session = this.sessions.get(sessionId);
    if (!session || session.state !== 'open') throw driveError(404, 'notFound', 'No active upload session with this id.');
    if (request.method === 'DELETE') {
      session.state = 'cancelled';
      return new Reply(499, null);
    }
    const range = /^bytes (?:(\d+)-(\d+)|\*)\/(\d+|\*)$/.exec(String(request.headers['content-range'] ?? ''));
    if (request.method !== 'PUT' || !range) throw driveError(400, 'badContent', 'Content-Range header missing or malformed');
    // Streamed to the session file (the fake shares the test process, whose memory the suite measures); a
    // rejected chunk is cut off again.
    const length = await appendStream(request, session.blob);
    const total = range[3] === '*' ? undefined : Number(range[3]);
    const reject = async (message: string) => {
      await truncate(session.blob, session.received);
      return driveError(400, 'badContent', message);
    };
    if (range[1] !== undefined) {
      const [start, end] = [Number(range[1]), Number(range[2])];
      if (start !== session.received || end - start + 1 !== length) throw await reject(`Content-Range ${start}-${end} does not continue at byte ${session.received} with ${length} bytes`);
      const isFinal = total !== undefined && end + 1 === total;
      if (!isFinal && length % CHUNK_UNIT !== 0) throw await reject(`Invalid request. The number of bytes uploaded is required to be a multiple of ${CHUNK_UNIT}, except for the final chunk.`);
      session.received += length;
    } else if (length > 0) {
      throw await reject('bytes */total must carry no body');
    }
    if (total === undefined || session.received < total) {
      return new Reply(308, null, session.received > 0 ? { range: `bytes=0-${session.received - 1}`, 'content-length': '0' } : { 'content-length': '0' });
    }
    if (session.received !== total) throw driveError(400, 'badContent', `total ${total} differs from the ${session.received} bytes received`);
    session.state = 'done';
    const content = { blob: session.blob, size: total };
    if (session.target.fileId) {
      const file = this.fileOr404(session.target.fileId);
      await this.store.replaceContent(file, content);
      return new Reply(200, view(file));
    }
    return new Reply(200, view(this.store.create({ name: session.target.name!, parents: session.target.parents }, content)));
  }
}
