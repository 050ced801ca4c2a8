import type { Duplex } from 'node:stream';
import { connectSsh, sshConnectError, type SshClient, type SshTarget } from '@holdfast/sdk';
import { ORIGIN, volumeError } from './errors.js';

/** Where the Engine listens, as seen on the SSH host. */
export type RemoteEndpoint = { socketPath: string } | { host: string; port: number };

/** How long an SSH connection with no open channel is kept for the next API call. */
const IDLE_MS = 2000;

/**
 * The Docker socket of a remote host, reached through one SSH connection (like `DOCKER_HOST=ssh://...`, but with
 * no `docker` CLI on the remote side). Each HTTP request of the Engine client gets its own channel: a
 * `direct-streamlocal@openssh.com` channel to the unix socket (OpenSSH `AllowStreamLocalForwarding`, on by
 * default), or `direct-tcpip` for a `tcp://` endpoint. The connection is opened on first use, shared by the calls
 * of one dump or restore, and closed once it has been idle for a moment, or by `close()`.
 */
export class SshDockerTunnel {
  private client: Promise<SshClient> | undefined;
  private open = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly target: () => SshTarget,
    private readonly endpoint: RemoteEndpoint,
  ) {}

  /** `unix:///var/run/docker.sock via SSH holdfast@host:22`, for messages. */
  get label(): string {
    const { host, port, username } = this.safeTarget() ?? { host: '?', port: 0, username: '?' };
    const where = 'socketPath' in this.endpoint ? `unix://${this.endpoint.socketPath}` : `tcp://${this.endpoint.host}:${this.endpoint.port}`;
    return `${where} via SSH ${username}@${host}:${port}`;
  }

  /** A new channel to the Engine; rejects with a coded error when the login or the forward is refused. */
  async channel(signal: AbortSignal): Promise<Duplex> {
    const client = await this.connect();
    clearTimeout(this.idleTimer);
    this.open++;
    let channel: Duplex;
    try {
      channel = await new Promise<Duplex>((resolve, reject) => {
        const settle = (error: Error | undefined, opened: Duplex) => (error ? reject(this.forwardError(error)) : resolve(opened));
        if ('socketPath' in this.endpoint) client.openssh_forwardOutStreamLocal(this.endpoint.socketPath, settle);
        else client.forwardOut('127.0.0.1', 0, this.endpoint.host, this.endpoint.port, settle);
      });
    } catch (error) {
      this.release();
      throw error;
    }
    if (signal.aborted) channel.destroy();
    channel.once('close', () => this.release());
    // The HTTP client handles errors of its socket; a channel error before it is attached must not crash.
    channel.on('error', () => undefined);
    return channel;
  }

  /** Ends the SSH connection now (the adapter's dispose). */
  close(): void {
    clearTimeout(this.idleTimer);
    const client = this.client;
    this.client = undefined;
    void client?.then((connected) => connected.end(), () => undefined);
  }

  private connect(): Promise<SshClient> {
    if (this.client) return this.client;
    const pending = connectSsh(this.target()).catch((error: unknown) => {
      throw sshConnectError(ORIGIN, error);
    });
    const forget = () => {
      if (this.client === pending) this.client = undefined;
    };
    // A failed login is retried by the next call; a dropped connection is replaced by it.
    pending.then((connected) => connected.once('close', forget), forget);
    this.client = pending;
    return pending;
  }

  private release(): void {
    this.open = Math.max(0, this.open - 1);
    if (this.open > 0) return;
    clearTimeout(this.idleTimer);
    this.idleTimer = setTimeout(() => this.close(), IDLE_MS);
    this.idleTimer.unref();
  }

  private forwardError(error: Error): Error {
    const what = 'socketPath' in this.endpoint ? `the socket ${this.endpoint.socketPath}` : `${this.endpoint.host}:${this.endpoint.port}`;
    return volumeError(
      'CONFIG',
      `cannot reach the Docker Engine at ${this.label}: the SSH server refused to connect to ${what} ` +
        `(no such socket, no permission for the SSH user, or forwarding disabled on the server): ${error.message}`,
      error,
    );
  }

  private safeTarget(): SshTarget | undefined {
    try {
      return this.target();
    } catch {
      return undefined;
    }
  }
}
