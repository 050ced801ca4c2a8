import { randomBytes } from 'node:crypto';
import { posix } from 'node:path';
import { addAbortSignal, type Readable } from 'node:stream';
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
  resolveByteRange,
} from '@holdfast/sdk';
import type { SftpStorageConfig } from './config.js';
import { RootConfinement } from './internal/confinement.js';
import { SftpConnection } from './internal/connection.js';
import { SFTP_ORIGIN, isNoSuchFile, notFound, toAdapterError } from './internal/errors.js';
import { listingStart, remotePathOf } from './internal/keys.js';
import { call, readdir, removeEmptyParents, statOrMissing, unlinkIfPresent } from './internal/sftp-ops.js';
import { uploadAtomically } from './internal/upload.js';
import { walkObjects } from './internal/walk.js';

/** A destination in a directory of an SFTP server, over one lazily opened, reused SSH connection. */
@injectable()
export class SftpStorage implements StorageAdapter {
  private readonly connection: SftpConnection;
  private readonly root: string;
  private readonly confinement: RootConfinement;

  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: SftpStorageConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {
    this.connection = new SftpConnection(config, context);
    this.root = posix.normalize(config.root);
    this.confinement = new RootConfinement(this.root);
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    const where = `${this.config.host}:${this.config.port}`;
    try {
      const sftp = await this.connection.sftp();
      const info = await statOrMissing(sftp, this.root);
      if (!info) throw new AdapterError(SFTP_ORIGIN, 'NOT_FOUND', `root ${this.root} does not exist on ${where}`);
      if (!info.isDirectory()) throw new AdapterError(SFTP_ORIGIN, 'CONFIG', `root ${this.root} on ${where} is not a directory`);
      // A real write proves the login may store files here, which a stat cannot.
      const probe = posix.join(this.root, `.holdfast-check.${randomBytes(8).toString('hex')}.partial`);
      await new Promise<void>((resolve, reject) => {
        const stream = sftp.createWriteStream(probe, { flags: 'w', mode: 0o600 });
        stream.once('error', reject);
        stream.once('close', () => resolve());
        stream.end(Buffer.from('holdfast'));
      });
      await unlinkIfPresent(sftp, probe);
      return { ok: true, message: `${this.root} on ${where} is a writable directory`, latencyMs: Date.now() - started };
    } catch (error) {
      return { ok: false, message: toAdapterError(error, `check of ${this.root} on ${where} failed`).message, latencyMs: Date.now() - started };
    }
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<PutResult> {
    let target: ReturnType<typeof remotePathOf>;
    try {
      target = remotePathOf(this.root, key);
    } catch (error) {
      body.destroy();
      throw error;
    }
    try {
      const sftp = await this.connection.sftp();
      await this.confinement.assertFolder(sftp, posix.dirname(target.path), key);
      const size = await uploadAtomically(sftp, { root: this.root, parent: target.parent, name: target.name }, body, options.signal);
      return { key, size };
    } catch (error) {
      body.destroy();
      this.context.logger.warn({ key, err: (error as Error).message }, 'sftp put failed; temporary file removed');
      throw toAdapterError(error, `put of "${key}" failed`);
    }
  }

  async get(key: string, options: GetOptions = {}): Promise<Readable> {
    const { path: keyPath } = remotePathOf(this.root, key);
    try {
      const sftp = await this.connection.sftp();
      // Read the resolved path: a link leading out of the root is no object of this destination.
      const path = await this.confinement.file(sftp, keyPath);
      const info = path === undefined ? undefined : await statOrMissing(sftp, path);
      if (!path || !info?.isFile()) throw notFound(key);
      const stream = sftp.createReadStream(path, resolveByteRange(SFTP_ORIGIN, key, info.size, options.range));
      // ssh2 closes the remote handle after the last byte; a connection closed meanwhile fails that close and the
      // stream emits an error after its end, which nobody listens for any more. It changes nothing, so log it.
      stream.on('error', (error: Error) => {
        if (stream.readableEnded) this.context.logger.debug({ key, err: error.message }, 'sftp read handle close failed after the end');
      });
      return options.signal ? addAbortSignal(options.signal, stream) : stream;
    } catch (error) {
      throw toAdapterError(error, `cannot read "${key}"`);
    }
  }

  async *list(prefix: string, options: { signal?: AbortSignal } = {}): AsyncIterable<StorageObjectInfo> {
    const folderKey = listingStart(prefix);
    let sftp;
    try {
      sftp = await this.connection.sftp();
    } catch (error) {
      throw toAdapterError(error, `cannot list "${prefix}"`);
    }
    yield* walkObjects({ sftp, root: this.root, confinement: this.confinement, folderKey, prefix, signal: options.signal });
  }

  async stat(key: string): Promise<StorageObjectInfo> {
    const { path: keyPath } = remotePathOf(this.root, key);
    try {
      const sftp = await this.connection.sftp();
      const path = await this.confinement.file(sftp, keyPath);
      const info = path === undefined ? undefined : await statOrMissing(sftp, path);
      if (!info?.isFile()) throw notFound(key);
      return { key, size: info.size, modifiedAt: new Date(info.mtime * 1000) };
    } catch (error) {
      throw toAdapterError(error, `cannot stat "${key}"`);
    }
  }

  async delete(key: string): Promise<void> {
    const { path, parent } = remotePathOf(this.root, key);
    try {
      const sftp = await this.connection.sftp();
      // unlink removes a link itself, never its target; a symlinked folder on the way could still lead out.
      await this.confinement.assertFolder(sftp, posix.dirname(path), key);
      try {
        await call((cb) => sftp.unlink(path, cb));
      } catch (error) {
        // Missing, or a folder of other keys: either way no object has this key, and delete is idempotent.
        if (isNoSuchFile(error) || (await statOrMissing(sftp, path))?.isDirectory()) return;
        throw error;
      }
      await removeEmptyParents(sftp, this.root, parent);
    } catch (error) {
      throw toAdapterError(error, `cannot delete "${key}"`);
    }
  }

  /** Removes the hidden temp files of interrupted puts of `key` (`.<name>.<16 hex>.partial` beside it). */
  async removeIncomplete(key: string): Promise<void> {
    const { path, parent } = remotePathOf(this.root, key);
    const folder = posix.dirname(path);
    const prefix = `.${posix.basename(path)}.`;
    try {
      const sftp = await this.connection.sftp();
      const entries = await readdir(sftp, folder).catch((error: unknown) => {
        if (isNoSuchFile(error)) return [];
        throw error;
      });
      for (const entry of entries) {
        if (entry.filename.startsWith(prefix) && /^[0-9a-f]{16}\.partial$/.test(entry.filename.slice(prefix.length))) {
          await unlinkIfPresent(sftp, posix.join(folder, entry.filename));
        }
      }
      await removeEmptyParents(sftp, this.root, parent);
    } catch (error) {
      throw toAdapterError(error, `cannot remove the temporary files of "${key}"`);
    }
  }

  async dispose(): Promise<void> {
    await this.connection.close();
  }
}
