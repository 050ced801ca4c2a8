import type { Readable } from 'node:stream';
import {
  AdapterError,
  TOKENS,
  inject,
  injectable,
  type AdapterContext,
  type GetOptions,
  type HealthResult,
  type PutOptions,
  type PutResult,
  type StorageAdapter,
  type StorageObjectInfo,
} from '@holdfast/sdk';
import type { RsyncStorageConfig } from './config.js';
import type { RsyncBackend } from './internal/backend.js';
import { resolveLogin } from './internal/credentials.js';
import { DaemonBackend } from './internal/daemon-backend.js';
import { RSYNC_ORIGIN, toAdapterError } from './internal/errors.js';
import { checkKey, listingFolderOf } from './internal/keys.js';
import { SshBackend } from './internal/ssh-backend.js';
import { SshConnection } from './internal/ssh-connection.js';

/** A destination reached with rsync: over SSH (streamed) or on an rsync daemon module (spooled). */
@injectable()
export class RsyncStorage implements StorageAdapter {
  private chosen?: RsyncBackend;

  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: RsyncStorageConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}

  /** Built on first use, so constructing never fails on missing credentials. */
  private backend(): RsyncBackend {
    if (this.chosen) return this.chosen;
    if (this.config.mode === 'daemon') {
      if (!this.config.module) throw new AdapterError(RSYNC_ORIGIN, 'CONFIG', 'daemon mode needs "module" (the [name] of the rsyncd.conf section)');
      const login = resolveLogin(this.config, this.context);
      this.chosen = new DaemonBackend(this.config, login.username, login.password);
    } else {
      this.chosen = new SshBackend(new SshConnection(this.config, this.context), this.config.root);
    }
    return this.chosen;
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    try {
      return { ok: true, message: await this.backend().check(), latencyMs: Date.now() - started };
    } catch (error) {
      return { ok: false, message: toAdapterError(error, 'check failed').message, latencyMs: Date.now() - started };
    }
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<PutResult> {
    try {
      const { parent, name } = checkKey(key);
      return { key, size: await this.backend().put({ key, parent, name }, body, options) };
    } catch (error) {
      body.destroy();
      const failure = options.signal?.aborted
        ? new AdapterError(RSYNC_ORIGIN, 'ABORTED', `put of "${key}" was aborted`)
        : toAdapterError(error, `put of "${key}" failed`);
      this.context.logger.warn({ key, err: failure.message }, 'rsync put failed; temporary file removed');
      throw failure;
    }
  }

  async get(key: string, options: GetOptions = {}): Promise<Readable> {
    checkKey(key);
    try {
      return await this.backend().get(key, options);
    } catch (error) {
      throw toAdapterError(error, `cannot read "${key}"`);
    }
  }

  async *list(prefix: string, options: { signal?: AbortSignal } = {}): AsyncIterable<StorageObjectInfo> {
    const folderKey = listingFolderOf(prefix);
    try {
      yield* this.backend().list(folderKey, prefix, options.signal);
    } catch (error) {
      throw toAdapterError(error, `cannot list "${prefix}"`);
    }
  }

  async stat(key: string): Promise<StorageObjectInfo> {
    checkKey(key);
    try {
      return await this.backend().stat(key);
    } catch (error) {
      throw toAdapterError(error, `cannot stat "${key}"`);
    }
  }

  async delete(key: string): Promise<void> {
    const { parent } = checkKey(key);
    try {
      await this.backend().delete(key, parent);
    } catch (error) {
      throw toAdapterError(error, `cannot delete "${key}"`);
    }
  }

  async dispose(): Promise<void> {
    const backend = this.chosen;
    this.chosen = undefined;
    await backend?.dispose();
  }
}
