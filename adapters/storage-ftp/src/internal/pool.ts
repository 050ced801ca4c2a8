import { posix } from 'node:path';
import { Client, type AccessOptions } from 'basic-ftp';
import type { FtpStorageConfig } from '../config.js';
import { replyCodeOf } from './errors.js';

/** Idle connections older than this are closed rather than reused: servers drop idle control connections. */
const IDLE_MS = 20_000;

interface IdleClient {
  client: Client;
  since: number;
  generation: number;
}

/**
 * A small pool of logged-in control connections. FTP runs one command (and one transfer) at a time per control
 * connection, so every operation borrows a connection exclusively and concurrent calls queue for one; at most
 * `maxConnections` are open. A connection that failed below the FTP level (socket, TLS, timeout, abort) is closed,
 * one that got an FTP error reply is reused.
 */
export class FtpPool {
  private idle: IdleClient[] = [];
  private readonly owner = new WeakMap<Client, number>();
  private busy = 0;
  private readonly waiting: Array<() => void> = [];
  private generation = 0;
  private root: string | undefined;
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(private readonly config: FtpStorageConfig) {}

  /** `host:port` for messages. */
  get where(): string {
    return `${this.config.host}:${this.port}`;
  }

  private get port(): number {
    return this.config.port ?? (this.config.secure === 'implicit' ? 990 : 21);
  }

  private accessOptions(): AccessOptions {
    const secure = this.config.secure === 'explicit' ? true : this.config.secure === 'implicit' ? 'implicit' : false;
    return {
      host: this.config.host,
      port: this.port,
      user: this.config.username,
      password: this.config.password,
      secure,
      // A fresh object per login: basic-ftp writes into it.
      secureOptions: secure ? { ca: this.config.ca, rejectUnauthorized: this.config.rejectUnauthorized } : undefined,
    };
  }

  private async open(): Promise<Client> {
    const client = new Client(this.config.timeoutSeconds * 1000, { allowSeparateTransferHost: this.config.allowSeparateTransferHost });
    try {
      await client.access(this.accessOptions());
      if (this.root === undefined) {
        // Every login starts in the same directory, so a relative root resolves once, to an absolute path: later
        // operations change directory freely.
        this.root = this.config.root.startsWith('/') ? posix.normalize(this.config.root) : posix.join(await client.pwd(), this.config.root);
      }
    } catch (error) {
      client.close();
      throw error;
    }
    this.owner.set(client, this.generation);
    return client;
  }

  /** Borrows a connection (waiting while `maxConnections` are busy) and the absolute root; give it back with {@link release}. */
  async acquire(): Promise<{ client: Client; root: string }> {
    while (this.busy >= this.config.maxConnections) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.busy++;
    try {
      for (let entry = this.idle.pop(); entry; entry = this.idle.pop()) {
        if (!entry.client.closed && Date.now() - entry.since < IDLE_MS && entry.generation === this.generation) {
          return { client: entry.client, root: this.root as string };
        }
        entry.client.close();
      }
      const client = await this.open();
      return { client, root: this.root as string };
    } catch (error) {
      this.busy--;
      this.waiting.shift()?.();
      throw error;
    }
  }

  /** Returns a borrowed connection; `isReusable` false closes it (its state is unknown after a transfer failed). */
  release(client: Client, isReusable: boolean): void {
    this.busy--;
    if (isReusable && !client.closed && this.owner.get(client) === this.generation) {
      this.idle.push({ client, since: Date.now(), generation: this.generation });
      this.scheduleSweep();
    } else {
      client.close();
    }
    this.waiting.shift()?.();
  }

  /** Runs `work` on a borrowed connection. */
  async use<T>(work: (client: Client, root: string) => Promise<T>): Promise<T> {
    const { client, root } = await this.acquire();
    let isReusable = true;
    try {
      return await work(client, root);
    } catch (error) {
      // An FTP error reply leaves the conversation in a known state; anything else may have broken it.
      isReusable = replyCodeOf(error) !== undefined;
      throw error;
    } finally {
      this.release(client, isReusable);
    }
  }

  private scheduleSweep(): void {
    if (this.sweepTimer) return;
    this.sweepTimer = setTimeout(() => {
      this.sweepTimer = undefined;
      const now = Date.now();
      const keep = this.idle.filter((entry) => now - entry.since < IDLE_MS);
      for (const entry of this.idle) if (!keep.includes(entry)) entry.client.close();
      this.idle = keep;
      if (keep.length > 0) this.scheduleSweep();
    }, IDLE_MS);
    // Idle connections must not keep a CLI process alive.
    this.sweepTimer.unref();
  }

  /** Closes idle connections; busy ones are closed when they come back. The pool stays usable. */
  close(): void {
    this.generation++;
    clearTimeout(this.sweepTimer);
    this.sweepTimer = undefined;
    for (const entry of this.idle.splice(0)) entry.client.close();
  }
}
