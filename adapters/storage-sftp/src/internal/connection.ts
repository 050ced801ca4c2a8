import { createHash, timingSafeEqual } from 'node:crypto';
import { AdapterError, type AdapterContext } from '@holdfast/sdk';
import type { Client, SFTPWrapper } from 'ssh2';
import type { SftpStorageConfig } from '../config.js';
import { resolveLogin } from './credentials.js';
import { SFTP_ORIGIN, toAdapterError } from './errors.js';

/** `SHA256:abc...=` or `abc...` -> the 43 unpadded base64 characters OpenSSH prints. */
function fingerprintBody(fingerprint: string): string {
  return fingerprint.replace(/^SHA256:/, '').replace(/=+$/, '');
}

/** The OpenSSH SHA256 fingerprint of a raw host key blob. */
export function hostKeyFingerprint(key: Buffer): string {
  return `SHA256:${fingerprintBody(createHash('sha256').update(key).digest('base64'))}`;
}

/**
 * One lazily opened SSH connection with its SFTP channel, shared by every operation of an adapter instance. A
 * dropped connection is forgotten, so the next operation reconnects.
 */
export class SftpConnection {
  private session: Promise<{ client: Client; sftp: SFTPWrapper }> | undefined;

  constructor(
    private readonly config: SftpStorageConfig,
    private readonly context: AdapterContext,
  ) {}

  /** The SFTP channel, connecting on first use. */
  async sftp(): Promise<SFTPWrapper> {
    this.session ??= this.open();
    try {
      return (await this.session).sftp;
    } catch (error) {
      this.session = undefined;
      throw error;
    }
  }

  /** Closes the connection; a later operation opens a new one. */
  async close(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    if (!session) return;
    const opened = await session.catch(() => undefined);
    opened?.client.end();
  }

  private open(): Promise<{ client: Client; sftp: SFTPWrapper }> {
    const login = resolveLogin(this.config, this.context);
    const pinned = this.config.hostKeySha256 ? fingerprintBody(this.config.hostKeySha256) : undefined;
    const where = `${this.config.host}:${this.config.port}`;
    let presentedKey: string | undefined;
    // ssh2 is loaded by the first connection: its import allocates a 16 MiB WebAssembly memory.
    const opening = import('ssh2').then(({ Client: SshClient }) => new Promise<{ client: Client; sftp: SFTPWrapper }>((resolve, reject) => {
      const client = new SshClient();
      let settled = false;
      const fail = (error: unknown) => {
        if (settled) return;
        settled = true;
        client.destroy();
        if (presentedKey !== undefined) {
          reject(
            new AdapterError(
              SFTP_ORIGIN,
              'AUTH',
              `host key of ${where} is ${presentedKey}, not the pinned ${this.config.hostKeySha256} (man in the middle, or the server key changed)`,
            ),
          );
        } else {
          reject(toAdapterError(error, `cannot connect to ${where} as ${login.username}`));
        }
      };
      // `on`, not `once`: ssh2 can emit a second error after the first (a handshake timeout, then "Connection lost
      // before handshake" when `fail` destroys the socket); with no listener left that one would crash the process.
      client.on('error', fail);
      client.once('close', () => {
        fail(new Error('connection closed during the handshake'));
        // Forget a connection that dropped after it was ready, so the next operation reconnects.
        if (this.session === opening) this.session = undefined;
      });
      client.once('ready', () => {
        client.sftp((error, sftp) => {
          if (error) return fail(error);
          settled = true;
          client.removeListener('error', fail);
          const logLate = (late: Error) => this.context.logger.warn({ err: late.message, host: where }, 'sftp connection error');
          client.on('error', logLate);
          // A fatal SFTP protocol error is also emitted on the channel; the pending requests fail with it anyway.
          sftp.on('error', logLate);
          resolve({ client, sftp });
        });
      });
      client.connect({
        host: this.config.host,
        port: this.config.port,
        username: login.username,
        password: login.password,
        privateKey: login.privateKey,
        passphrase: login.passphrase,
        readyTimeout: this.config.connectTimeoutSeconds * 1000,
        keepaliveInterval: this.config.keepaliveSeconds * 1000,
        keepaliveCountMax: 3,
        hostVerifier: (key: Buffer) => {
          if (!pinned) return true;
          const actual = fingerprintBody(hostKeyFingerprint(key));
          const same = actual.length === pinned.length && timingSafeEqual(Buffer.from(actual), Buffer.from(pinned));
          if (!same) presentedKey = `SHA256:${actual}`;
          return same;
        },
      });
    }));
    return opening;
  }
}
