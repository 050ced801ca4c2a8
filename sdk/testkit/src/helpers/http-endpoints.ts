import { createServer as createHttpServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createNetServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** One request a {@link HttpReceiver} got. */
export interface RecordedRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** What the receiver answers; default 200 with an empty JSON object. */
export interface ReceiverResponse {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

/** A local HTTP server (127.0.0.1 unless told) that records every request. */
export interface HttpReceiver {
  /** Base URL without a trailing slash, e.g. `http://127.0.0.1:40123`. */
  url: string;
  requests: RecordedRequest[];
  /** Changes the answer for the following requests. */
  respondWith(response: ReceiverResponse | ((request: RecordedRequest) => ReceiverResponse)): void;
  close(): Promise<void>;
}

function listen(server: Server | ReturnType<typeof createNetServer>, host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve((server.address() as AddressInfo).port));
  });
}

function closeServer(server: Server | ReturnType<typeof createNetServer>, sockets: Set<Socket>): Promise<void> {
  for (const socket of sockets) socket.destroy();
  return new Promise((resolve) => server.close(() => resolve()));
}

function trackSockets(server: Server | ReturnType<typeof createNetServer>): Set<Socket> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return sockets;
}

/**
 * Starts a {@link HttpReceiver}; bodies are kept in memory, so use it for notification-sized requests. `host` is a
 * loopback address (default 127.0.0.1); another one, such as 127.0.0.2, is a second host for redirect tests.
 */
export async function startHttpReceiver(initial?: ReceiverResponse, options: { host?: string } = {}): Promise<HttpReceiver> {
  const requests: RecordedRequest[] = [];
  let answer: ReceiverResponse | ((request: RecordedRequest) => ReceiverResponse) = initial ?? { status: 200, body: '{}' };
  const server = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
      };
      requests.push(recorded);
      const response = typeof answer === 'function' ? answer(recorded) : answer;
      res.writeHead(response.status, { 'content-type': 'application/json', ...response.headers });
      res.end(response.body ?? '');
    });
  });
  const sockets = trackSockets(server);
  const host = options.host ?? '127.0.0.1';
  const port = await listen(server, host);
  return {
    url: `http://${host}:${port}`,
    requests,
    respondWith(next) {
      answer = next;
    },
    close: () => closeServer(server, sockets),
  };
}

/** A TCP endpoint that accepts connections and never answers: the "hanging host" of notification tests. */
export interface HangingEndpoint {
  url: string;
  /** Connections accepted so far. */
  connections(): number;
  close(): Promise<void>;
}

/** Starts a {@link HangingEndpoint} on 127.0.0.1. */
export async function startHangingEndpoint(): Promise<HangingEndpoint> {
  let accepted = 0;
  const server = createNetServer(() => {
    accepted++;
  });
  const sockets = trackSockets(server);
  const port = await listen(server);
  return { url: `http://127.0.0.1:${port}`, connections: () => accepted, close: () => closeServer(server, sockets) };
}

/**
 * A URL on 127.0.0.1 where nothing listens: a port is bound, read and released, so connecting is refused. (A
 * later test could take the port again; the window is tiny and the OS hands out ports round-robin.)
 */
export async function closedPortUrl(): Promise<string> {
  const server = createNetServer();
  const port = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}
