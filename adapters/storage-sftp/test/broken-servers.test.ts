// Servers that break the SSH handshake in different ways. ssh2 may emit a second error after the first (a handshake
// timeout, then "Connection lost before handshake" once the socket is destroyed): every one must end as the
// operation's AdapterError, never as an uncaught error that would take the whole server process down.
import { createServer, type Server, type Socket } from 'node:net';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { isAdapterError, type StorageAdapter } from '@holdfast/sdk';
import { createAdapterInstance } from '@holdfast/testkit';
import definition from '../src/index.js';

const servers: Server[] = [];
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await Promise.all(servers.splice(0).map((server) => new Promise((resolve) => server.close(resolve))));
});

async function brokenServer(onConnection: (socket: Socket) => void): Promise<number> {
  const server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
    onConnection(socket);
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as { port: number }).port;
}

/** Runs `check()` while collecting what escapes to the process: nothing may. */
async function checkWithoutEscapes(port: number): Promise<{ error: unknown; escaped: unknown[] }> {
  const escaped: unknown[] = [];
  const record = (error: unknown) => void escaped.push(error);
  process.on('uncaughtException', record);
  process.on('unhandledRejection', record);
  try {
    const sftp = createAdapterInstance<StorageAdapter>(definition, { host: '127.0.0.1', port, username: 'nobody', password: 'not-used-here', root: '/tmp', connectTimeoutSeconds: 1 });
    const error = await sftp.put('x.txt', Readable.from([Buffer.from('x')])).then(() => undefined, (e: unknown) => e);
    // Late errors arrive after the first failure: give them time to surface.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await sftp.dispose?.();
    return { error, escaped };
  } finally {
    process.off('uncaughtException', record);
    process.off('unhandledRejection', record);
  }
}

describe('storage-sftp against servers that break the handshake', () => {
  it.each([
    ['never says a word (handshake timeout)', (_socket: Socket) => undefined],
    ['closes at once', (socket: Socket) => void socket.end()],
    ['sends a banner that is not SSH, then closes', (socket: Socket) => void socket.end('HTTP/1.1 400 Bad Request\r\n\r\n')],
    ['sends an SSH banner, then goes silent and closes late', (socket: Socket) => {
      socket.write('SSH-2.0-broken\r\n');
      setTimeout(() => socket.destroy(), 1_200);
    }],
  ])('a server that %s: the operation fails with an AdapterError, nothing escapes', async (_name, behaviour) => {
    const port = await brokenServer(behaviour);
    const { error, escaped } = await checkWithoutEscapes(port);
    expect(isAdapterError(error), String(error)).toBe(true);
    expect((error as Error).message).toMatch(/127\.0\.0\.1/);
    expect(escaped.map(String)).toEqual([]);
  });
});
