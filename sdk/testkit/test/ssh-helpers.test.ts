// The process and socket helpers the SSH-mode tests of the source adapters share. They look at this machine's real
// processes and connections (the repository's sshd helper is tooling/harness/sshd.mjs, tested in tooling/test).
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { allCommandLines, ownConnectionsTo, waitFor } from '../src/index.js';

describe('process and connection helpers', () => {
  it('finds a running command by its arguments', async () => {
    const marker = `hf-marker-${randomBytes(4).toString('hex')}`;
    const child = spawn('sh', ['-c', `sleep 30; : ${marker}`], { stdio: 'ignore' });
    try {
      expect(await waitFor(() => allCommandLines().some((line) => line.includes(marker)), 5_000)).toBe(true);
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    expect(await waitFor(() => !allCommandLines().some((line) => line.includes(marker)), 5_000)).toBe(true);
  });

  it('counts this process\'s established connections to a loopback port', async () => {
    const accepted: Socket[] = [];
    const server = createServer((socket) => accepted.push(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      expect(ownConnectionsTo(port)).toBe(0);
      const client = createConnection(port, '127.0.0.1');
      await once(client, 'connect');
      expect(ownConnectionsTo(port)).toBe(1);
      client.destroy();
      expect(await waitFor(() => ownConnectionsTo(port) === 0, 5_000)).toBe(true);
    } finally {
      for (const socket of accepted) socket.destroy();
      server.close();
    }
  });

  it('waitFor answers true as soon as the probe does, false when the time is up', async () => {
    let calls = 0;
    expect(await waitFor(() => ++calls === 3, 5_000)).toBe(true);
    expect(calls).toBe(3);
    const started = Date.now();
    expect(await waitFor(async () => false, 200)).toBe(false);
    expect(Date.now() - started).toBeGreaterThanOrEqual(200);
  });
});
