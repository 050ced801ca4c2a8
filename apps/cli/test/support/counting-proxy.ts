// A TCP proxy in front of the test S3 (Ceph RGW) that counts the bytes each client sent, split by who the client is:
// a connection from this test process (where the server runs) or from another process (the agent). Linux only: the
// client's socket is found in /proc/net/tcp by its port and looked up among this process's file descriptors.
import { readFile, readdir, readlink } from 'node:fs/promises';
import { createConnection, createServer, type Server, type Socket } from 'node:net';

export interface CountingProxy {
  endpoint: string;
  /** Bytes sent to S3 by connections of this process (the server) and of other processes (the agent). */
  sent: { server: number; others: number };
  close(): Promise<void>;
}

async function socketInode(localPort: number): Promise<string | undefined> {
  const table = await readFile('/proc/net/tcp', 'utf8');
  const hexPort = localPort.toString(16).toUpperCase().padStart(4, '0');
  for (const line of table.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields[1]?.endsWith(`:${hexPort}`)) return fields[9];
  }
  return undefined;
}

async function ownsSocket(inode: string): Promise<boolean> {
  for (const fd of await readdir('/proc/self/fd')) {
    const target = await readlink(`/proc/self/fd/${fd}`).catch(() => '');
    if (target === `socket:[${inode}]`) return true;
  }
  return false;
}

export async function startCountingProxy(upstream: string): Promise<CountingProxy> {
  const target = new URL(upstream);
  const sent = { server: 0, others: 0 };
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    client.pause();
    const owner = socketInode(client.remotePort ?? 0).then(async (inode) => (inode && (await ownsSocket(inode)) ? 'server' : 'others'));
    const upstreamSocket = createConnection({ host: target.hostname, port: Number(target.port || 80) });
    sockets.add(upstreamSocket);
    void owner.then((who) => {
      client.on('data', (chunk: Buffer) => {
        sent[who] += chunk.length;
      });
      client.pipe(upstreamSocket).pipe(client);
      client.resume();
    });
    const end = () => {
      client.destroy();
      upstreamSocket.destroy();
    };
    client.on('error', end).on('close', end);
    upstreamSocket.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    sent,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
