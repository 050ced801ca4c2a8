import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { Duplex, Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { VolumeSourceConfig } from '../config.js';
import { aborted, codeOfStatus, connectError, volumeError } from './errors.js';
import type { RemoteEndpoint, SshDockerTunnel } from './ssh-tunnel.js';

/** How to reach the Engine: a unix socket or a TCP host, optionally with TLS. */
interface Endpoint {
  label: string;
  socketPath?: string;
  host?: string;
  port?: number;
}

export function parseEndpoint(dockerHost: string): Endpoint {
  if (dockerHost.startsWith('unix://')) return { label: dockerHost, socketPath: dockerHost.slice('unix://'.length) };
  if (dockerHost.startsWith('/')) return { label: `unix://${dockerHost}`, socketPath: dockerHost };
  const url = new URL(dockerHost.replace(/^tcp:/, 'http:'));
  return { label: `tcp://${url.host}`, host: url.hostname, port: Number(url.port || 2375) };
}

/** The endpoint as the SSH tunnel needs it. */
export function remoteEndpoint(dockerHost: string): RemoteEndpoint {
  const endpoint = parseEndpoint(dockerHost);
  return endpoint.socketPath ? { socketPath: endpoint.socketPath } : { host: endpoint.host!, port: endpoint.port! };
}

/**
 * A minimal client of the Docker Engine API: JSON calls plus streamed archive downloads and uploads. With a tunnel,
 * every request travels over its own SSH channel to the Engine on the SSH host.
 */
export class EngineApi {
  private readonly endpoint: Endpoint;

  constructor(
    private readonly config: VolumeSourceConfig,
    private readonly tunnel?: SshDockerTunnel,
  ) {
    this.endpoint = parseEndpoint(config.dockerHost);
  }

  get label(): string {
    return this.tunnel?.label ?? this.endpoint.label;
  }

  /** A JSON call; a non-2xx status (other than those in `accept`) becomes an AdapterError with Docker's message. */
  async json<T>(method: string, path: string, body?: unknown, options: { accept?: number[]; signal?: AbortSignal } = {}): Promise<{ status: number; body: T }> {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const response = await this.request(method, path, {
      headers: payload ? { 'content-type': 'application/json', 'content-length': String(payload.length) } : {},
      signal: options.signal ?? AbortSignal.timeout(this.config.timeoutSeconds * 1000),
      send: async (req) => {
        req.end(payload);
      },
    });
    const text = await readAll(response);
    const status = response.statusCode ?? 0;
    if (status >= 300 && !(options.accept ?? []).includes(status)) throw statusError(method, path, status, text);
    const parsed = text && (response.headers['content-type'] ?? '').includes('json') ? (JSON.parse(text) as T) : (text as T);
    return { status, body: parsed };
  }

  /** A request whose response body is streamed back to the caller (the archive download); 2xx only. */
  async stream(method: string, path: string, signal: AbortSignal): Promise<IncomingMessage> {
    const response = await this.request(method, path, { headers: {}, signal, send: async (req) => void req.end() });
    const status = response.statusCode ?? 0;
    if (status >= 300) throw statusError(method, path, status, await readAll(response));
    return response;
  }

  /** Streams `body` as the request body (the archive upload) and checks the status. */
  async upload(method: string, path: string, body: Readable, signal: AbortSignal): Promise<void> {
    // A failure of the body (a refused archive member) is the cause; the hang-up it leads to is only its effect.
    let bodyError: unknown;
    body.once('error', (error) => (bodyError ??= error));
    let text: string;
    let status: number;
    try {
      const response = await this.request(method, path, {
        headers: { 'content-type': 'application/x-tar', 'transfer-encoding': 'chunked' },
        signal,
        send: async (req) => {
          await pipeline(body, req).catch((error: unknown) => {
            bodyError ??= error;
            req.destroy();
          });
        },
      });
      text = await readAll(response);
      status = response.statusCode ?? 0;
    } catch (error) {
      throw bodyError ?? error;
    }
    if (bodyError) throw bodyError;
    if (status >= 300) throw statusError(method, path, status, text);
  }

  private async request(
    method: string,
    path: string,
    options: { headers: Record<string, string>; signal: AbortSignal; send: (req: http.ClientRequest) => Promise<void> },
  ): Promise<IncomingMessage> {
    if (options.signal.aborted) throw abortReason(options.signal, method, path);
    // Over SSH the request rides on a channel opened first; the HTTP client takes it as its socket.
    let channel: Duplex | undefined;
    if (this.tunnel) channel = await this.tunnel.channel(options.signal);
    const { socketPath, host, port } = channel ? { socketPath: undefined, host: undefined, port: undefined } : this.endpoint;
    // Over TCP the Host header is the daemon's address: Node derives the TLS server name (SNI, checked name) from it.
    const hostHeader = this.endpoint.host ? `${this.endpoint.host}:${this.endpoint.port}` : 'docker';
    const common = {
      method,
      path: `/v${this.config.apiVersion}${path}`,
      headers: { host: hostHeader, ...options.headers },
      socketPath,
      host,
      port,
      ...(channel ? { createConnection: () => channel as unknown as import('node:net').Socket } : {}),
    };
    return new Promise((resolve, reject) => {
      if (options.signal.aborted) {
        channel?.destroy();
        return reject(abortReason(options.signal, method, path));
      }
      const req = this.config.tls && !channel
        ? https.request({
            ...common,
            ca: this.config.tlsCa,
            cert: this.config.tlsCert,
            key: this.config.tlsKey,
            rejectUnauthorized: this.config.tlsRejectUnauthorized,
          })
        : http.request(common);
      const onAbort = () => req.destroy(abortReason(options.signal, method, path));
      options.signal.addEventListener('abort', onAbort, { once: true });
      req.once('close', () => options.signal.removeEventListener('abort', onAbort));
      req.on('error', (error) => {
        if (options.signal.aborted) reject(abortReason(options.signal, method, path));
        else if (!req.reusedSocket && !channel) reject(connectError(this.endpoint.label, error));
        else reject(volumeError('TRANSIENT', `${method} ${path.split('?')[0]} failed: ${(error as Error).message}`));
      });
      req.once('response', resolve);
      options.send(req).catch(reject);
    });
  }
}

/** A timeout of the signal reads as TRANSIENT, an abort from the job as ABORTED. */
function abortReason(signal: AbortSignal, method: string, path: string): Error {
  const reason = signal.reason as { name?: string } | undefined;
  if (reason?.name === 'TimeoutError') return volumeError('TRANSIENT', `${method} ${path} timed out`);
  return aborted(`${method} ${path}`);
}

function statusError(method: string, path: string, status: number, text: string): Error {
  let message = text.trim();
  try {
    message = (JSON.parse(text) as { message?: string }).message ?? message;
  } catch {
    // Not JSON: Docker's plain text message is used as is.
  }
  return volumeError(codeOfStatus(status), `${method} ${path.split('?')[0]} answered ${status}: ${message.slice(0, 500)}`);
}

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
