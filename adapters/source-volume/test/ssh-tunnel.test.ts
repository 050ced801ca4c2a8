import { chmod, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { createAdapterInstance, describeSourceAdapter } from '@holdfast/testkit';
import { sshdState } from '@holdfast/tooling/harness/sshd';
import { isAdapterError, type SourceAdapter } from '@holdfast/sdk';
import definition from '../src/index.js';
import { FakeDockerEngine } from './fake-docker.js';
import { drain, volumeSource } from './helpers.js';
import { describeFolder, seedVolumeFolder } from './seed.js';

// Docker over SSH: the adapter logs in to the real OpenSSH sshd on 127.0.0.1:2222 (tooling/test-services/sshd.mjs)
// and asks it to connect to a unix socket on "its" host (direct-streamlocal channels). No Docker Engine can run
// here, so what answers on that socket is the labelled fake of the Engine API, run by this process; sshd, as the
// user sshtest, is what connects to it.
const sshd = sshdState();
const privateKey = await readFile(sshd.keyPath, 'utf8');

const fake = await FakeDockerEngine.start();
// The fake's folder is private to root; sshd forwards as sshtest, which must be able to reach the socket.
await chmod(dirname(fake.socketPath), 0o711);
await chmod(fake.socketPath, 0o666);
afterAll(() => fake.stop());

const sshConfig = (extra: Record<string, unknown> = {}, ssh: Record<string, unknown> = {}) => ({
  dockerHost: `unix://${fake.socketPath}`,
  volume: 'app_data',
  stopContainers: true,
  ssh: { host: sshd.host, port: sshd.port, username: sshd.user, hostKeySha256: sshd.hostKeySha256, ...ssh },
  sshPrivateKey: privateKey,
  ...extra,
});

let counter = 0;
describeSourceAdapter<{ volume: string }, Record<string, unknown>>('source-volume over SSH to a fake Docker Engine API (fake)', {
  definition,
  seed: async () => {
    const volume = `ssh_seed_${++counter}`;
    await seedVolumeFolder(await fake.addVolume(volume));
    return { volume };
  },
  config: (seeded) => sshConfig({ volume: seeded.volume }),
  badConnectionConfig: () => sshConfig({ timeoutSeconds: 2 }, { port: 1 }),
  restoreTarget: (seeded) => ({ database: `${seeded.volume}_restored` }),
  verify: async (restored, seeded) => {
    const copy = await describeFolder(fake.volumes.get(restored.database!)!);
    expect(copy).toEqual(await describeFolder(fake.volumes.get(seeded.volume)!));
    expect(Object.keys(copy)).toContain('conf/deep/naïve 東京.txt');
    expect(fake.helpers()).toEqual([]);
  },
});

describe('source-volume Docker over SSH (real sshd, fake Engine API) (fake)', () => {
  beforeEach(async () => {
    fake.calls.length = 0;
    fake.faults.length = 0;
    fake.containers.clear();
    if (!fake.volumes.has('app_data')) await seedVolumeFolder(await fake.addVolume('app_data'));
    fake.addRunningContainer('/app', 'app_data');
  });

  it('(fake) checks, dumps and restores through the tunnel with the same Engine calls as over a local socket', async () => {
    // The login from the "ssh" credential profile: the config names none.
    const withProfile = createAdapterInstance<SourceAdapter>(definition, sshConfig({ sshPrivateKey: undefined }, { username: undefined }), {
      credentials: { ssh: { type: 'USERNAME_PASSWORD', username: sshd.user, password: sshd.password } },
    });
    const health = await withProfile.check();
    expect(health).toMatchObject({ ok: true, version: '24.0.7-fake' });
    expect(health.message).toBe('Docker Engine 24.0.7-fake, volume app_data found');
    await withProfile.dispose?.();
    fake.calls.length = 0;

    const adapter = volumeSource(sshConfig());
    const handle = await adapter.dump({ databases: [], signal: new AbortController().signal });
    const bytes = await drain(handle.stream);
    const stats = await handle.done;
    expect(stats.bytes).toBe(bytes.length);
    expect(fake.sequence()).toEqual([
      'GET /version',
      'GET /volumes/app_data',
      'GET /containers/json',
      'POST /containers/{id}/stop',
      'POST /containers/create',
      'GET /containers/{id}/archive',
      'DELETE /containers/{id}',
      'POST /containers/{id}/start',
    ]);
    const result = await adapter.restore(Readable.from([bytes]), { target: { database: 'ssh_copy' }, signal: new AbortController().signal });
    expect(result.warnings).toEqual(['volume ssh_copy did not exist and was created']);
    expect(await describeFolder(fake.volumes.get('ssh_copy')!)).toEqual(await describeFolder(fake.volumes.get('app_data')!));
    await adapter.dispose?.();
  });

  it('(fake) the socket is opened by sshd as the SSH user: a socket that user cannot reach fails with CONFIG naming it', async () => {
    await chmod(dirname(fake.socketPath), 0o700);
    try {
      const error = await volumeSource(sshConfig()).dump({ databases: [], signal: new AbortController().signal }).catch((e: unknown) => e);
      expect(isAdapterError(error) && (error as { code: string }).code).toBe('CONFIG');
      expect((error as Error).message).toContain(`cannot reach the Docker Engine at unix://${fake.socketPath} via SSH sshtest@127.0.0.1:${sshd.port}`);
      expect((error as Error).message).toMatch(/SSH server refused to connect to the socket/);
      // Root (this process) could have reached it: nothing arrived, so nothing was forwarded around sshd.
      expect(fake.calls).toEqual([]);
    } finally {
      await chmod(dirname(fake.socketPath), 0o711);
    }
  });

  it('a wrong host key pin and a wrong SSH password are refused before any Engine call, without the secret', async () => {
    const pinned = await volumeSource(sshConfig({}, { hostKeySha256: `SHA256:${'B'.repeat(43)}` })).check();
    expect(pinned.ok).toBe(false);
    expect(pinned.message).toMatch(/SSH host key mismatch/);
    const wrong = volumeSource(sshConfig({ sshPrivateKey: undefined, sshPassword: 'Wrong-Docker-Ssh-9' }));
    const error = await wrong.dump({ databases: [], signal: new AbortController().signal }).catch((e: unknown) => e);
    expect(isAdapterError(error) && (error as { code: string }).code).toBe('AUTH');
    expect((error as Error).message).toMatch(/SSH authentication failed/);
    expect((error as Error).message).not.toContain('Wrong-Docker-Ssh-9');
    expect(fake.calls).toEqual([]);
  });

  it('tls together with ssh is refused as a config error', async () => {
    const health = await volumeSource(sshConfig({ tls: true })).check();
    expect(health.ok).toBe(false);
    expect(health.message).toMatch(/tls cannot be combined with ssh/);
  });
});
