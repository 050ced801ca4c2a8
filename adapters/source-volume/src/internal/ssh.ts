import { SshConnectError, type AdapterContext, type SshTarget } from '@holdfast/sdk';
import type { VolumeSourceConfig } from '../config.js';
import { volumeError } from './errors.js';

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The SSH login of SSH mode, or undefined without `ssh`. Config fields win over the credential profile assigned
 * under the role `ssh` (USERNAME_PASSWORD `{ username, password }` or SSH_KEY `{ username, privateKey, passphrase }`).
 */
export function resolveSshTarget(config: VolumeSourceConfig, context: AdapterContext): SshTarget | undefined {
  if (!config.ssh) return undefined;
  const profile = context.credentials?.ssh ?? {};
  const target: SshTarget = {
    host: config.ssh.host,
    port: config.ssh.port,
    username: text(config.ssh.username) ?? text(profile.username) ?? '',
    password: text(config.sshPassword) ?? text(profile.password),
    privateKey: text(config.sshPrivateKey) ?? text(profile.privateKey),
    passphrase: text(config.sshPassphrase) ?? text(profile.passphrase),
    hostKeySha256: config.ssh.hostKeySha256,
    readyTimeoutMs: config.timeoutSeconds * 1000,
  };
  if (!target.username) throw volumeError('CONFIG', 'SSH mode needs a username: set ssh.username or assign an "ssh" credential profile');
  if (!target.password && !target.privateKey) {
    throw volumeError('CONFIG', 'SSH mode needs a password or private key: set sshPassword/sshPrivateKey or assign an "ssh" credential profile');
  }
  // The SSH channel already encrypts and authenticates; TLS inside it would need the daemon's TCP port as well.
  if (config.tls) throw volumeError('CONFIG', 'tls cannot be combined with ssh: the SSH tunnel already protects the connection; turn tls off');
  return target;
}

/** Maps an SSH login failure to a coded error; the SDK's messages name host, port and user, never the secret. */
export function sshError(error: unknown): unknown {
  if (!(error instanceof SshConnectError)) return error;
  const what = /host key/i.test(error.message) ? 'SSH host key mismatch' : error.reason === 'AUTH' ? 'SSH authentication failed' : 'SSH connection failed';
  return volumeError(error.reason, `${what}: ${error.message}`, error);
}
