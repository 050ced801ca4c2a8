import { AdapterError, type AdapterContext, type AdapterErrorOrigin } from '@holdfast/kernel/adapter';
import { SshConnectError, type SshTarget } from './ssh-connection.js';

/**
 * The SSH-mode part of a source adapter's parsed config: the `ssh` block (see `sshBlockFields`) and the top-level
 * login secrets (see `sshLoginSecretFields`).
 */
export interface SshModeConfig {
  ssh?: { host: string; port: number; username?: string; hostKeySha256: string };
  sshPassword?: string;
  sshPrivateKey?: string;
  sshPassphrase?: string;
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The SSH login of SSH mode, or undefined when the config has no `ssh` block. Config fields win over the credential
 * profile assigned under the role `ssh` (USERNAME_PASSWORD `{ username, password }` or SSH_KEY
 * `{ username, privateKey, passphrase }`). A login with no username, or with neither password nor key, is a
 * `CONFIG` error of `origin`. `handshakeTimeoutSeconds` is the adapter's own setting (undefined: connectSsh's 10 s).
 */
export function resolveSshTarget(
  origin: AdapterErrorOrigin | string,
  config: SshModeConfig,
  context: AdapterContext,
  handshakeTimeoutSeconds: number | undefined,
): SshTarget | undefined {
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
    readyTimeoutMs: handshakeTimeoutSeconds === undefined ? undefined : handshakeTimeoutSeconds * 1000,
  };
  if (!target.username) throw new AdapterError(origin, 'CONFIG', 'SSH mode needs a username: set ssh.username or assign an "ssh" credential profile');
  if (!target.password && !target.privateKey) {
    throw new AdapterError(origin, 'CONFIG', 'SSH mode needs a password or private key: set sshPassword/sshPrivateKey or assign an "ssh" credential profile');
  }
  return target;
}

/**
 * Maps an SSH login failure (`SshConnectError`) to an `AdapterError` of `origin` with the same reason (`AUTH` or
 * `TRANSIENT`); any other error is answered unchanged. The SDK's messages name host, port and user, never the secret.
 */
export function sshConnectError(origin: AdapterErrorOrigin | string, error: unknown): unknown {
  if (!(error instanceof SshConnectError)) return error;
  const what = /host key/i.test(error.message) ? 'SSH host key mismatch' : error.reason === 'AUTH' ? 'SSH authentication failed' : 'SSH connection failed';
  return new AdapterError(origin, error.reason, `${what}: ${error.message}`, { cause: error });
}
