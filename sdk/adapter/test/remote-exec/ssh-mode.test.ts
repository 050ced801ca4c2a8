// SSH mode of the source adapters: the login taken from the config or the "ssh" credential profile, the mapping of
// SshConnectError to the adapter's coded error, and the shared config fields. No connection is opened here (the
// real-sshd tests are remote-exec.test.ts and each adapter's ssh-mode test).
import { describe, expect, it } from 'vitest';
import {
  AdapterError,
  resolveSshTarget,
  secretFieldsOf,
  sshBlockFields,
  sshConnectError,
  SshConnectError,
  sshLoginSecretFields,
  z,
  type AdapterContext,
} from '../../src/index.js';

const ORIGIN = { kind: 'source', id: 'example' } as const;
const FINGERPRINT = `SHA256:${'A'.repeat(43)}`;
const block = { host: 'db.example', port: 2222, hostKeySha256: FINGERPRINT };
const noProfile = {} as AdapterContext;
const withProfile = (ssh: Record<string, unknown>) => ({ credentials: { ssh } }) as unknown as AdapterContext;

function thrown(run: () => unknown): AdapterError {
  try {
    run();
  } catch (error) {
    return error as AdapterError;
  }
  throw new Error('expected an error');
}

describe('resolveSshTarget', () => {
  it('answers undefined without an ssh block (local mode), whatever else is set', () => {
    expect(resolveSshTarget(ORIGIN, { sshPassword: 'pw' }, withProfile({ username: 'u', password: 'p' }), 10)).toBeUndefined();
  });

  it('takes the login from the config, the handshake timeout in milliseconds', () => {
    const target = resolveSshTarget(ORIGIN, { ssh: { ...block, username: 'backup' }, sshPrivateKey: 'KEY', sshPassphrase: 'phrase' }, noProfile, 7);
    expect(target).toEqual({
      host: 'db.example',
      port: 2222,
      username: 'backup',
      password: undefined,
      privateKey: 'KEY',
      passphrase: 'phrase',
      hostKeySha256: FINGERPRINT,
      readyTimeoutMs: 7000,
    });
  });

  it('falls back to the "ssh" credential profile field by field; empty config strings count as unset', () => {
    const profile = withProfile({ username: 'profile-user', password: 'profile-pw', privateKey: 'PROFILE-KEY', passphrase: 'profile-phrase' });
    const target = resolveSshTarget(ORIGIN, { ssh: { ...block, username: '' }, sshPassword: '', sshPrivateKey: 'CONFIG-KEY' }, profile, 10);
    expect(target).toMatchObject({ username: 'profile-user', password: 'profile-pw', privateKey: 'CONFIG-KEY', passphrase: 'profile-phrase' });
  });

  it('leaves the timeout to connectSsh when the adapter gives none', () => {
    expect(resolveSshTarget(ORIGIN, { ssh: { ...block, username: 'u' }, sshPassword: 'p' }, noProfile, undefined)?.readyTimeoutMs).toBeUndefined();
  });

  it('refuses a login without username, or without password and key, as a CONFIG error of the adapter', () => {
    const noUser = thrown(() => resolveSshTarget(ORIGIN, { ssh: block, sshPassword: 'p' }, noProfile, 10));
    expect(noUser).toBeInstanceOf(AdapterError);
    expect(noUser.code).toBe('CONFIG');
    expect(noUser.message).toBe('[source-example] SSH mode needs a username: set ssh.username or assign an "ssh" credential profile');

    const noSecret = thrown(() => resolveSshTarget('source-example', { ssh: block }, withProfile({ username: 'u' }), 10));
    expect(noSecret.code).toBe('CONFIG');
    expect(noSecret.message).toBe(
      '[source-example] SSH mode needs a password or private key: set sshPassword/sshPrivateKey or assign an "ssh" credential profile',
    );
  });
});

describe('sshConnectError', () => {
  it('names a host key mismatch, a refused login and an unreachable host, keeping the reason as the code', () => {
    const cases = [
      [new SshConnectError('AUTH', 'host key of h:22 is SHA256:x, not the pinned SHA256:y'), 'AUTH', 'SSH host key mismatch'],
      [new SshConnectError('AUTH', 'login to h:22 as u failed: All configured authentication methods failed'), 'AUTH', 'SSH authentication failed'],
      [new SshConnectError('TRANSIENT', 'cannot connect to h:22: connect ECONNREFUSED'), 'TRANSIENT', 'SSH connection failed'],
    ] as const;
    for (const [cause, code, what] of cases) {
      const mapped = sshConnectError(ORIGIN, cause) as AdapterError;
      expect(mapped).toBeInstanceOf(AdapterError);
      expect(mapped.code).toBe(code);
      expect(mapped.message).toBe(`[source-example] ${what}: ${cause.message}`);
      expect(mapped.cause).toBe(cause);
    }
  });

  it('answers any other error unchanged', () => {
    const other = new Error('boom');
    expect(sshConnectError(ORIGIN, other)).toBe(other);
  });
});

describe('SSH config fields', () => {
  const schema = z.object({
    ssh: z.object({ host: z.string().min(1).describe('SSH host'), ...sshBlockFields('Docker over SSH') }).optional(),
    ...sshLoginSecretFields,
  });

  it('marks the three login fields secret and defaults the port to 22', () => {
    expect(secretFieldsOf(schema)).toEqual(['sshPassword', 'sshPrivateKey', 'sshPassphrase']);
    expect(schema.parse({ ssh: { host: 'h', hostKeySha256: FINGERPRINT } }).ssh?.port).toBe(22);
  });

  it('refuses a host key that is not an OpenSSH SHA256 fingerprint, naming the expected form', () => {
    const result = schema.safeParse({ ssh: { host: 'h', hostKeySha256: 'MD5:aa:bb' } });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.message).toBe('expected an OpenSSH fingerprint like SHA256:AbC...');
  });

  it('points the host key description at the README section it is given (default "SSH mode")', () => {
    expect(sshBlockFields('Docker over SSH').hostKeySha256.description).toContain('(see "Docker over SSH" in the README');
    expect(sshBlockFields().hostKeySha256.description).toContain('(see "SSH mode" in the README');
  });
});
