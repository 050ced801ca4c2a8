import { AdapterError, SshConnectError, type AdapterContext, type SshTarget } from '@holdfast/sdk';
import type { MongoSourceConfig } from '../config.js';
import { mongoError, ORIGIN } from './errors.js';

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The SSH login of SSH mode, or undefined in local mode. Config fields win over the credential profile assigned
 * under the role `ssh` (USERNAME_PASSWORD `{ username, password }` or SSH_KEY `{ username, privateKey, passphrase }`).
 */
export function resolveSshTarget(config: MongoSourceConfig, context: AdapterContext): SshTarget | undefined {
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
    readyTimeoutMs: config.connectTimeoutSeconds * 1000,
  };
  if (!target.username) throw mongoError('CONFIG', 'SSH mode needs a username: set ssh.username or assign an "ssh" credential profile');
  if (!target.password && !target.privateKey) {
    throw mongoError('CONFIG', 'SSH mode needs a password or private key: set sshPassword/sshPrivateKey or assign an "ssh" credential profile');
  }
  return target;
}

/** Maps an SSH login failure to a coded error; the SDK's messages name host, port and user, never the secret. */
export function sshError(error: unknown): unknown {
  if (!(error instanceof SshConnectError)) return error;
  const what = /host key/i.test(error.message) ? 'SSH host key mismatch' : error.reason === 'AUTH' ? 'SSH authentication failed' : 'SSH connection failed';
  return new AdapterError(ORIGIN, error.reason, `${what}: ${error.message}`, { cause: error });
}
