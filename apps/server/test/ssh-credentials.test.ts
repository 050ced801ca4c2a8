// A credential profile whose SSH key pair the catalog generates signs the SFTP destination in to the real sshd:
// proves the generated private key format is one the SFTP adapter's SSH client accepts, for every algorithm.
import { appendFile, readFile, writeFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

const SSHD = JSON.parse(await readFile('/tmp/holdfast-test-services/sshd/sshd.json', 'utf8')) as { host: string; port: number; user: string; home: string };
const AUTHORIZED_KEYS = `${SSHD.home}/.ssh/authorized_keys`;

describe('generated SSH key profiles against the real sshd', () => {
  let server: FullServer;
  let admin: Caller;
  const installed: string[] = [];

  beforeAll(async () => {
    server = await startFullServer('sqlite');
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
  });

  afterAll(async () => {
    await server?.close();
    // Remove exactly the lines this test added; the file is shared with the SFTP adapter's own tests.
    const lines = (await readFile(AUTHORIZED_KEYS, 'utf8')).split('\n');
    await writeFile(AUTHORIZED_KEYS, lines.filter((line) => !installed.includes(line)).join('\n'));
  });

  it.each(['ed25519', 'ecdsa', 'rsa'] as const)('signs in with a generated %s key, and fails before the key is installed', async (algorithm) => {
    const profile = await server.call('POST', '/api/credentials/ssh-key', admin, { name: `deploy ${algorithm}`, username: SSHD.user, algorithm });
    expect(profile.status, JSON.stringify(profile.body)).toBe(201);
    expect(profile.body.publicKey).toMatch(/^(ssh-ed25519|ecdsa-sha2-nistp256|ssh-rsa) [A-Za-z0-9+/=]+/);
    expect(JSON.stringify(profile.body)).not.toMatch(/PRIVATE KEY/);

    const storage = await server.call('POST', '/api/adapters', admin, {
      name: `sftp via ${algorithm}`,
      type: 'storage',
      adapterId: 'sftp',
      config: { host: SSHD.host, port: SSHD.port, root: SSHD.home },
      primaryCredentialId: profile.body.id,
    });
    expect(storage.status, JSON.stringify(storage.body)).toBe(201);

    const before = await server.call('POST', '/api/adapters/test-connection', admin, { id: storage.body.id });
    expect(before.body.success).toBe(false);

    const line = String(profile.body.publicKey).trim();
    installed.push(line);
    await appendFile(AUTHORIZED_KEYS, `\n${line}\n`);
    const after = await server.call('POST', '/api/adapters/test-connection', admin, { id: storage.body.id });
    expect(after.body, JSON.stringify(after.body)).toMatchObject({ success: true });
  });
});
