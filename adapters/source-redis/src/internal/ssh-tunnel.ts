import net from 'node:net';
import { Client } from 'ssh2';
import { hostKeyFingerprint, SshConnectError, type SshTarget } from '@holdfast/sdk';
import { sshError } from './ssh.js';

/** A local port whose connections are forwarded over SSH to the Redis server. */
export interface SshTunnel {
  port: number;
  close(): void;
}

const body = (fingerprint: string) => fingerprint.replace(/^SHA256:/, '').replace(/=+$/, '');

/**
 * Logs in with the pinned host key, like the sdk's remote-exec (same messages: the host, port and user, never the
 * secret; `SshConnectError` AUTH or TRANSIENT).
 */
function connect(target: SshTarget): Promise<Client> {
  const where = `${target.host}:${target.port}`;
  return new Promise((resolve, reject) => {
    const client = new Client();
    let presented: string | undefined;
    let isSettled = false;
    const fail = (error: Error) => {
      if (isSettled) return;
      isSettled = true;
      client.destroy();
      if (presented && body(presented) !== body(target.hostKeySha256)) {
        reject(new SshConnectError('AUTH', `host key of ${where} is ${presented}, not the pinned ${target.hostKeySha256}`));
      } else if (/authentication/i.test(error.message)) {
        reject(new SshConnectError('AUTH', `login to ${where} as ${target.username} failed: ${error.message}`));
      } else {
        reject(new SshConnectError('TRANSIENT', `cannot connect to ${where}: ${error.message}`));
      }
    };
    client.once('error', fail);
    client.once('close', () => fail(new Error('connection closed during the handshake')));
    client.once('ready', () => {
      isSettled = true;
      client.on('error', () => undefined);
      resolve(client);
    });
    client.connect({
      host: target.host,
      port: target.port,
      username: target.username,
      password: target.password,
      privateKey: target.privateKey,
      passphrase: target.passphrase,
      readyTimeout: target.readyTimeoutMs ?? 10_000,
      hostVerifier: (key) => {
        presented = hostKeyFingerprint(key);
        return body(presented) === body(target.hostKeySha256);
      },
    });
  });
}

/**
 * Opens an SSH connection and a listener on 127.0.0.1 (a random port) that forwards each accepted socket to
 * `host:port` as seen from the SSH host (a `direct-tcpip` channel: needs `AllowTcpForwarding` on the server, no
 * remote tool). The Redis client then connects to the local port as if the server were there; the listener takes
 * that one connection only.
 */
export async function openTunnel(target: SshTarget, host: string, port: number): Promise<SshTunnel> {
  const client = await connect(target).catch((error: unknown) => {
    throw sshError(error);
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
