import { createHash, timingSafeEqual } from 'node:crypto';
import { AdapterError, type AdapterContext } from '@holdfast/sdk';
import type { Client, ClientChannel } from 'ssh2';
import type { RsyncStorageConfig } from '../config.js';
import { resolveLogin } from './credentials.js';
import { RSYNC_ORIGIN, toAdapterError } from './errors.js';

function fingerprintBody(fingerprint: string): string {
  return fingerprint.replace(/^SHA256:/, '').replace(/=+$/, '');
}

/**
 * One lazily opened SSH connection shared by every operation of an adapter instance; each operation is an exec
 * channel on it. A dropped connection is forgotten, so the next operation reconnects.
 */
export class SshConnection {
  private opening: Promise<Client> | undefined;

  constructor(
    private readonly config: RsyncStorageConfig,
    private readonly context: AdapterContext,
  ) {}

  get where(): string {
    return `${this.config.host}:${this.config.port ?? 22}`;
  }

  /** Opens an exec channel running `command` in the login's shell. */
  async exec(command: string): Promise<ClientChannel> {
    this.opening ??= this.open();
    let client: Client;
    try {
      client = await this.opening;
    } catch (error) {
      this.opening = undefined;
      throw error;
    }
    return new Promise((resolve, reject) => {
      client.exec(command, (error, channel) => (error ? reject(toAdapterError(error, `cannot run a command on ${this.where}`)) : resolve(channel)));
    });
  }

  async close(): Promise<void> {
    const opening = this.opening;
    this.opening = undefined;
    (await opening?.catch(() => undefined))?.end();
  }

  private open(): Promise<Client> {
    const login = resolveLogin(this.config, this.context);
    const pinned = this.config.hostKeySha256 ? fingerprintBody(this.config.hostKeySha256) : undefined;
    let presented: string | undefined;
    // ssh2 is loaded by the first connection: its import allocates a 16 MiB WebAssembly memory.
    const opening = import('ssh2').then(({ Client: SshClient }) => new Promise<Client>((resolve, reject) => {
      const client = new SshClient();
      let settled = false;
      const fail = (error: unknown) => {
        if (settled) return;
        settled = true;
        client.destroy();
        reject(
          presented === undefined
            ? toAdapterError(error, `cannot connect to ${this.where} as ${login.username}`)
            : new AdapterError(RSYNC_ORIGIN, 'AUTH', `host key of ${this.where} is ${presented}, not the pinned ${this.config.hostKeySha256}`),
        );
      };
      // `on`, not `once`: ssh2 can emit a second error during a failed handshake; `fail` settles once.
      client.on('error', fail);
      client.once('close', () => {
        fail(new Error('connection closed during the handshake'));
        if (this.opening === opening) this.opening = undefined;
      });
      client.once('ready', () => {
        settled = true;
        client.removeListener('error', fail);
        client.on('error', (late: Error) => this.context.logger.warn({ err: late.message, host: this.where }, 'rsync ssh connection error'));
        resolve(client);
      });
      client.connect({
        host: this.config.host,
        port: this.config.port ?? 22,
        username: login.username,
        password: login.password,
        privateKey: login.privateKey,
        passphrase: login.passphrase,
        readyTimeout: this.config.connectTimeoutSeconds * 1000,
        keepaliveInterval: 15_000,
        keepaliveCountMax: Math.max(1, Math.ceil(this.config.ioTimeoutSeconds / 15)),
        hostVerifier: (key: Buffer) => {
          if (!pinned) return true;
          const actual = fingerprintBody(createHash('sha256').update(key).digest('base64'));
          const same = actual.length === pinned.length && timingSafeEqual(Buffer.from(actual), Buffer.from(pinned));
          if (!same) presented = `SHA256:${actual}`;
          return same;
        },
      });
    }));
    return opening;
  }
}

/** How a remote command ended, with its output (stdout capped) and stderr tail. */
export interface CommandResult {
  code: number | null;
  /** The signal that ended the remote command, when one did. */
  signal?: string;
  stdout: string;
  stderr: string;
}

/** Marker line carrying the exit code of a {@link run} command, see there. */
const EXIT_MARKER = /\n?__holdfast_exit:(\d+)\n$/;

/** Collects a channel's exit code, stdout and stderr. */
export function finished(channel: ClientChannel, collectStdout = true): Promise<CommandResult> {
  return new Promise((resolve) => {
    let stdout = '';
    let stderr = '';
    let code: number | null = null;
    let signal: string | undefined;
    if (collectStdout) channel.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    channel.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-16_384)));
    channel.on('exit', (exitCode: number | null, exitSignal?: string) => {
      code = exitCode;
      signal = exitSignal ?? undefined;
    });
    channel.once('close', () => {
      const marker = EXIT_MARKER.exec(stdout);
      if (marker) resolve({ code: Number(marker[1]), signal, stdout: stdout.slice(0, marker.index), stderr });
      else resolve({ code, signal, stdout, stderr });
    });
  });
}

/**
 * Runs a command to its end. The exit code also travels on stdout: under load OpenSSH sometimes closes a session
 * channel without the exit-status message, and a rename that did happen must not be reported as failed.
 */
export async function run(connection: SshConnection, command: string): Promise<CommandResult> {
  const channel = await connection.exec(`( ${command}\n); printf '\\n__holdfast_exit:%s\\n' "$?"`);
  const result = finished(channel);
  channel.end();
  return result;
}
