import { createHash } from 'node:crypto';
import type { SshClient } from './ssh-client.js';

/** Where and how to log in; the host key is always pinned. */
export interface SshTarget {
  host: string;
  port: number;
  username: string;
  password?: string;
  privateKey?: string | Buffer;
  passphrase?: string;
  /** OpenSSH SHA256 fingerprint of the server's host key (`SHA256:...`); see {@link fetchHostKeyFingerprint}. */
  hostKeySha256: string;
  readyTimeoutMs?: number;
}

/** Why a connection failed: `AUTH` (login or host key), `TRANSIENT` (network). */
export class SshConnectError extends Error {
  override readonly name = 'SshConnectError';
  constructor(
    readonly reason: 'AUTH' | 'TRANSIENT',
    message: string,
  ) {
    super(message);
  }
}

const body = (fingerprint: string) => fingerprint.replace(/^SHA256:/, '').replace(/=+$/, '');

/**
 * ssh2, loaded by the first connection: its import allocates a 16 MiB WebAssembly memory (poly1305) and would
 * otherwise sit in every Holdfast process, SSH in use or not.
 */
const loadSsh2 = () => import('ssh2');

/** The OpenSSH SHA256 fingerprint of a raw host key blob. */
export function hostKeyFingerprint(key: Buffer): string {
  return `SHA256:${body(createHash('sha256').update(key).digest('base64'))}`;
}

/** Opens an SSH connection whose host key must match the pinned fingerprint; the secret never reaches a message. */
export async function connectSsh(target: SshTarget): Promise<SshClient> {
  const where = `${target.host}:${target.port}`;
  const { Client } = await loadSsh2();
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
    // `on`, not `once`: after a handshake timeout ssh2 emits "Connection lost before handshake" too; a second error
    // with no listener would be uncaught and stop the process. `fail` settles once.
    client.on('error', fail);
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
 * The first-use flow: connects only far enough to see the server's host key and answers its fingerprint, for the
 * admin to confirm and pin. No login is attempted.
 */
export async function fetchHostKeyFingerprint(host: string, port: number, timeoutMs = 10_000): Promise<string> {
  const { Client } = await loadSsh2();
  return new Promise((resolve, reject) => {
    const client = new Client();
    let seen: string | undefined;
    const finish = () => (seen ? resolve(seen) : reject(new SshConnectError('TRANSIENT', `no host key from ${host}:${port}`)));
    client.on('error', finish);
    client.once('close', finish);
    client.connect({
      host,
      port,
      username: 'holdfast-host-key-probe',
      readyTimeout: timeoutMs,
      hostVerifier: (key) => {
        seen = hostKeyFingerprint(key);
        return false;
      },
    });
  });
}
