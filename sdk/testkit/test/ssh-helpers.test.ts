// The helpers the SSH-mode tests of the source adapters share. They run here without the test sshd: the state file is
// a temporary one, and the process and socket helpers look at this machine's real processes and connections.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createConnection, createServer, type AddressInfo, type Socket } from 'node:net';
import { userInfo, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { allCommandLines, ownConnectionsTo, remoteToolProcesses, SSHD_STATE_FILE, sshdState, waitFor } from '../src/index.js';

const dir = await mkdtemp(join(tmpdir(), 'holdfast-testkit-sshd-'));
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('sshdState', () => {
  it('reads the launcher state file (by default the one tooling/test-services/sshd.mjs writes)', async () => {
    expect(SSHD_STATE_FILE).toBe('/tmp/holdfast-test-services/sshd/sshd.json');
    const state = { host: '127.0.0.1', port: 2222, user: 'sshtest', password: 'pw', keyPath: '/k', hostKeySha256: 'SHA256:x', home: '/home/sshtest' };
    const file = join(dir, 'sshd.json');
    await writeFile(file, JSON.stringify(state));
    expect(sshdState(file)).toEqual(state);
  });

  it('says the test sshd is not running when the state file is missing', () => {
    expect(() => sshdState(join(dir, 'missing.json'))).toThrow(/^the test sshd is not running \(tooling\/test-services\/sshd\.mjs\): ENOENT/);
  });
});

describe('process and connection helpers', () => {
  it('finds a running command by its arguments, machine-wide and among one user\'s processes', async () => {
    const marker = `hf-marker-${randomBytes(4).toString('hex')}`;
    const child = spawn('sh', ['-c', `sleep 30; : ${marker}`], { stdio: 'ignore' });
    try {
      expect(await waitFor(() => allCommandLines().some((line) => line.includes(marker)), 5_000)).toBe(true);
      expect(remoteToolProcesses(userInfo().username, marker)).toHaveLength(1);
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    expect(remoteToolProcesses(userInfo().username, marker)).toEqual([]);
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
