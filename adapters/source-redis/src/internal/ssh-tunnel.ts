import net from 'node:net';
import { connectSsh, sshConnectError, type SshTarget } from '@holdfast/sdk';
import { ORIGIN } from './connection.js';

/** A local port whose connections are forwarded over SSH to the Redis server. */
export interface SshTunnel {
  port: number;
  close(): void;
}

/**
 * Opens an SSH connection and a listener on 127.0.0.1 (a random port) that forwards each accepted socket to
 * `host:port` as seen from the SSH host (a `direct-tcpip` channel: needs `AllowTcpForwarding` on the server, no
 * remote tool). The Redis client then connects to the local port as if the server were there; the listener takes
 * that one connection only.
 */
export async function openTunnel(target: SshTarget, host: string, port: number): Promise<SshTunnel> {
  const client = await connectSsh(target).catch((error: unknown) => {
    throw sshConnectError(ORIGIN, error);
  });
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    // One client per tunnel: once it is connected nobody else on this host may use the forward.
    server.close();
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    client.forwardOut('127.0.0.1', 0, host, port, (error, channel) => {
      // A refused forward (server down, forwarding disabled) closes the socket: the Redis client reports it.
      if (error) return socket.destroy();
      channel.on('error', () => socket.destroy());
      socket.pipe(channel).pipe(socket);
      socket.once('close', () => channel.destroy());
    });
  });
  server.on('error', () => undefined);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  client.once('close', () => {
    server.close();
    for (const socket of sockets) socket.destroy();
  });
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => {
      server.close();
      for (const socket of sockets) socket.destroy();
      client.end();
    },
  };
}
