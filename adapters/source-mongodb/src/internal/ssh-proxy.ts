import { once } from 'node:events';
import { randomBytes, timingSafeEqual } from 'node:crypto';
import net from 'node:net';
import { connectSsh, sshConnectError, type SshTarget } from '@holdfast/sdk';
import { ORIGIN } from './errors.js';
import { HandshakeReader, readConnectRequest, reply, REPLY } from './socks5.js';

/** MongoClient options that send every connection of the driver through the proxy. */
export interface ProxyOptions {
  proxyHost: string;
  proxyPort: number;
  proxyUsername: string;
  proxyPassword: string;
}

/** A local SOCKS5 front of one SSH connection; `close()` ends every forward and the SSH connection. */
export interface SshProxy {
  options: ProxyOptions;
  close(): Promise<void>;
}

/** Compares without an early exit, so the proxy password cannot be guessed byte by byte through timing. */
function same(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Opens an SSH connection and a SOCKS5 listener on 127.0.0.1 (a random port) in front of it. Each SOCKS CONNECT
 * becomes an ssh2 `forwardOut` (`direct-tcpip`: needs `AllowTcpForwarding` on the server, no remote tool) to the
 * requested host and port as the SSH host resolves and reaches them.
 *
 * SOCKS rather than one fixed port forward: the driver opens several connections per server (monitor, RTT pinger,
 * pool) and, for a replica set, connects to the members under the names the servers report; through the proxy all
 * of them take the tunnel, and TLS still verifies the real host names. The listener demands a user name and
 * password made for this proxy alone, so no other local process can use the tunnel while it is open.
 */
export async function openSshProxy(target: SshTarget, handshakeTimeoutMs: number): Promise<SshProxy> {
  const client = await connectSsh(target).catch((error: unknown) => {
    throw sshConnectError(ORIGIN, error);
  });
  const user = randomBytes(12).toString('hex');
  const password = randomBytes(24).toString('hex');
  const sockets = new Set<net.Socket>();

  const serve = async (socket: net.Socket): Promise<void> => {
    const reader = new HandshakeReader(socket);
    const request = await readConnectRequest(socket, reader, (given) => same(given.user, Buffer.from(user)) && same(given.password, Buffer.from(password)));
    if (!request) return;
    reader.release();
    client.forwardOut('127.0.0.1', 0, request.host, request.port, (error, channel) => {
      if (socket.destroyed) return void channel?.destroy();
      // A refused forward (nothing listens there, forwarding disabled): the driver reports the host as unreachable.
      if (error) return void socket.end(reply(REPLY.refused));
      socket.setTimeout(0);
      socket.write(reply(REPLY.succeeded));
      channel.on('error', () => socket.destroy());
      channel.once('close', () => socket.destroy());
      socket.once('close', () => channel.destroy());
      socket.pipe(channel).pipe(socket);
    });
  };

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    // A client that stalls in the handshake is dropped; a forwarded connection has no idle limit.
    socket.setTimeout(handshakeTimeoutMs, () => socket.destroy());
    serve(socket).catch(() => socket.destroy());
  });
  server.on('error', () => undefined);
  const dropAll = () => {
    server.close();
    for (const socket of sockets) socket.destroy();
  };
  const sshClosed = once(client, 'close').catch(() => undefined);
  // The SSH connection dropping ends every forward at once: the driver then sees closed sockets and fails the run.
  void sshClosed.then(dropAll);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
  } catch (error) {
    client.end();
    throw error;
  }
  return {
    options: { proxyHost: '127.0.0.1', proxyPort: (server.address() as net.AddressInfo).port, proxyUsername: user, proxyPassword: password },
    close: async () => {
      dropAll();
      client.end();
      await Promise.race([sshClosed, new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
    },
  };
}
