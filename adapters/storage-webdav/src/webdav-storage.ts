import { randomBytes } from 'node:crypto';
import { addAbortSignal, type Readable } from 'node:stream';
import {
  AdapterError,
  TOKENS,
  inject,
  injectable,
  resolveByteRange,
  type AdapterContext,
  type GetOptions,
  type HealthResult,
  type PutOptions,
  type PutResult,
  type StorageAdapter,
  type StorageObjectInfo,
} from '@holdfast/sdk';
import type { WebdavStorageConfig } from './config.js';
import { DavSession } from './internal/dav-session.js';
import { WEBDAV_ORIGIN, notFound, toAdapterError } from './internal/errors.js';
import { davPathOf, listingStart } from './internal/keys.js';
import { uploadAtomically } from './internal/upload.js';
import { walkObjects } from './internal/walk.js';

/** A destination in a folder (collection) of a WebDAV server; HTTP keep-alive connections, no session state. */
@injectable()
export class WebdavStorage implements StorageAdapter {
  private readonly dav: DavSession;

  constructor(
    @inject(TOKENS.AdapterConfig) config: WebdavStorageConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {
    this.dav = new DavSession(config);
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    const where = this.dav.baseUrl;
    try {
      const root = await this.dav.statOrMissing('/');
      if (!root) throw new AdapterError(WEBDAV_ORIGIN, 'NOT_FOUND', `the root folder ${where} does not exist`);
      if (!root.isCollection) throw new AdapterError(WEBDAV_ORIGIN, 'CONFIG', `${where} is a file, not a folder`);
      // A real write proves the login may store files here, which a PROPFIND cannot; the probe is deleted at once
      // and is named like a temp file, so a listing hides (and later sweeps) it should the delete fail.
      const probe = `/.holdfast-check.${randomBytes(8).toString('hex')}.partial`;
      try {
        await this.dav.putStream(probe, Buffer.from('holdfast'));
      } finally {
        await this.dav.removeIfPresent(probe).catch(() => undefined);
      }
      return { ok: true, message: `${where} is a writable WebDAV folder`, latencyMs: Date.now() - started };
    } catch (error) {
      return { ok: false, message: toAdapterError(error, `check of ${where} failed`).message, latencyMs: Date.now() - started };
    }
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<PutResult> {
    let target: ReturnType<typeof davPathOf>;
    try {
      target = davPathOf(key);
    } catch (error) {
      body.destroy();
      throw error;
    }
    try {
      const size = await uploadAtomically(this.dav, target, body, options.signal);
      return { key, size };
    } catch (error) {
      body.destroy();
      this.context.logger.warn({ key, err: (error as Error).message }, 'webdav put failed; temporary file removed');
      throw toAdapterError(error, `put of "${key}" failed`);
    }
  }

  async get(key: string, options: GetOptions = {}): Promise<Readable> {
    const { path } = davPathOf(key);
    try {
      const info = await this.dav.statOrMissing(path, options.signal);
      if (!info || info.isCollection) throw notFound(key);
      const range = resolveByteRange(WEBDAV_ORIGIN, key, info.size, options.range);
      const stream = await this.dav.getStream(path, range, options.signal);
      return options.signal ? addAbortSignal(options.signal, stream) : stream;
    } catch (error) {
      throw toAdapterError(error, `cannot read "${key}"`);
    }
  }

  async *list(prefix: string, options: { signal?: AbortSignal } = {}): AsyncIterable<StorageObjectInfo> {
    const folderKey = listingStart(prefix);
    yield* walkObjects({ dav: this.dav, folderKey, prefix, signal: options.signal });
  }

  async stat(key: string): Promise<StorageObjectInfo> {
    const { path } = davPathOf(key);
    try {
      const info = await this.dav.statOrMissing(path);
      if (!info || info.isCollection) throw notFound(key);
      return { key, size: info.size, modifiedAt: info.modifiedAt };
    } catch (error) {
      throw toAdapterError(error, `cannot stat "${key}"`);
    }
  }

  async delete(key: string): Promise<void> {
    const { path } = davPathOf(key);
    try {
      // DELETE of a collection is recursive in WebDAV: a key that names a folder of other keys must stay untouched.
      const info = await this.dav.statOrMissing(path);
      if (!info || info.isCollection) return;
      await this.dav.removeIfPresent(path);
    } catch (error) {
      throw toAdapterError(error, `cannot delete "${key}"`);
    }
  }

  async dispose(): Promise<void> {
    this.dav.close();
  }
}
