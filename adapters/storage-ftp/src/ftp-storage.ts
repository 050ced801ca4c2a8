import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { Readable, addAbortSignal } from 'node:stream';
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
import type { FtpStorageConfig } from './config.js';
import { openDownload } from './internal/download.js';
import { FTP_ORIGIN, isUnavailable, notFound, toAdapterError } from './internal/errors.js';
import { listingStart, remotePathOf } from './internal/keys.js';
import { FtpPool } from './internal/pool.js';
import { enterRoot, removeEmptyParents, removeIfPresent, sizeOrMissing } from './internal/remote-ops.js';
import { uploadAtomically } from './internal/upload.js';
import { listDirectory, walkObjects } from './internal/walk.js';

/** A destination in a directory of an FTP/FTPS server, over a small pool of lazily opened control connections. */
@injectable()
export class FtpStorage implements StorageAdapter {
  private readonly pool: FtpPool;

  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: FtpStorageConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {
    this.pool = new FtpPool(config);
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    const where = this.pool.where;
    const tls = { explicit: 'explicit TLS', implicit: 'implicit TLS', none: 'plain FTP, unencrypted' }[this.config.secure];
    try {
      const root = await this.pool.use(async (client, absoluteRoot) => {
        await enterRoot(client, absoluteRoot, where);
        // A real write proves the login may store files here; the probe is named like a temp file and removed at once.
        const probe = posix.join(absoluteRoot, `.holdfast-check.${randomBytes(8).toString('hex')}.partial`);
        try {
          await client.uploadFrom(Readable.from([Buffer.from('holdfast')]), probe);
        } finally {
          await removeIfPresent(client, probe).catch(() => undefined);
        }
        return absoluteRoot;
      });
      return { ok: true, message: `${root} on ${where} is a writable directory (${tls})`, latencyMs: Date.now() - started };
    } catch (error) {
      return { ok: false, message: toAdapterError(error, `check of ${this.config.root} on ${where} failed`).message, latencyMs: Date.now() - started };
    }
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<PutResult> {
    let target: ReturnType<typeof remotePathOf>;
    try {
      target = remotePathOf('/', key);
    } catch (error) {
      body.destroy();
      throw error;
    }
    try {
      const size = await uploadAtomically(this.pool, target, body, options.signal);
      return { key, size };
    } catch (error) {
      body.destroy();
      this.context.logger.warn({ key, err: (error as Error).message }, 'ftp put failed; temporary file removed');
      throw toAdapterError(error, `put of "${key}" failed`);
    }
  }

  async get(key: string, options: GetOptions = {}): Promise<Readable> {
    remotePathOf('/', key);
    options.signal?.throwIfAborted();
    const stream = await openDownload(this.pool, key, options.range);
    return options.signal ? addAbortSignal(options.signal, stream) : stream;
  }

  async *list(prefix: string, options: { signal?: AbortSignal } = {}): AsyncIterable<StorageObjectInfo> {
    const folderKey = listingStart(prefix);
    yield* walkObjects({ pool: this.pool, folderKey, prefix, signal: options.signal });
  }

  async stat(key: string): Promise<StorageObjectInfo> {
    remotePathOf('/', key);
    try {
      return await this.pool.use(async (client, root) => {
        const path = posix.join(root, key);
        const size = await sizeOrMissing(client, path);
        if (size === undefined) throw notFound(key);
        const modifiedAt = await client.lastMod(path).catch(async () => {
          // No MDTM on this server: the parent's listing has the date, to the minute.
          const entries = await listDirectory(client, posix.dirname(path));
          return entries.find((entry) => entry.name === posix.basename(path))?.modifiedAt ?? new Date(0);
        });
        return { key, size, modifiedAt };
      });
    } catch (error) {
      throw toAdapterError(error, `cannot stat "${key}"`);
    }
  }

  async delete(key: string): Promise<void> {
    const { parent } = remotePathOf('/', key);
    try {
      await this.pool.use(async (client, root) => {
        const path = posix.join(root, key);
        try {
          await client.remove(path);
        } catch (error) {
          if (!isUnavailable(error)) throw error;
          // 550 means missing, a folder, or not allowed; only a file that is still there is a failure.
          if ((await sizeOrMissing(client, path)) === undefined) return;
          throw new AdapterError(FTP_ORIGIN, 'AUTH', `cannot delete "${key}": the server refused (${(error as Error).message})`, { cause: error });
        }
        await removeEmptyParents(client, root, parent);
      });
    } catch (error) {
      throw toAdapterError(error, `cannot delete "${key}"`);
    }
  }

  async dispose(): Promise<void> {
    this.pool.close();
  }
}
