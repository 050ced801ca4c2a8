// A server that accepts TCP and never speaks SSH: the handshake times out, and ssh2 then emits a second error
// ("Connection lost before handshake") as the socket is destroyed. Both must end as the call's rejection; a second
// error with no listener left would be uncaught and stop the whole server process.
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectSsh, fetchHostKeyFingerprint, SshConnectError } from '../../src/remote-exec/ssh-connection.js';

let server: Server;
let port: number;
const sockets: Socket[] = [];

beforeAll(async () => {
  server = createServer((socket) => {
    sockets.push(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => server.close(resolve));
});

/** Runs `call`, then waits for late errors, collecting whatever escapes to the process: nothing may. */
async function withoutEscapes(call: () => Promise<unknown>): Promise<{ error: unknown; escaped: string[] }> {
  const escaped: string[] = [];
  const record = (error: unknown) => void escaped.push(String(error));
  process.on('uncaughtException', record);
  process.on('unhandledRejection', record);
  try {
    const error = await call().then(() => undefined, (e: unknown) => e);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    return { error, escaped };
  } finally {
    process.off('uncaughtException', record);
    process.off('unhandledRejection', record);
  }
}

describe('SSH connections to a server that never answers the handshake', () => {
  it('connectSsh rejects with a TRANSIENT SshConnectError and nothing escapes', async () => {
    const { error, escaped } = await withoutEscapes(() =>
      connectSsh({ host: '127.0.0.1', port, username: 'nobody', password: 'unused', hostKeySha256: 'SHA256:none', readyTimeoutMs: 500 }),
    );
    expect(error).toBeInstanceOf(SshConnectError);
    expect((error as SshConnectError).reason).toBe('TRANSIENT');
    expect(escaped).toEqual([]);
  });

  it('fetchHostKeyFingerprint rejects naming the host and nothing escapes', async () => {
    const { error, escaped } = await withoutEscapes(() => fetchHostKeyFingerprint('127.0.0.1', port, 500));
    expect(String(error)).toMatch(`no host key from 127.0.0.1:${port}`);
    expect(escaped).toEqual([]);
  });
});
