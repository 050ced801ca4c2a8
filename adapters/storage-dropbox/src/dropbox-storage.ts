import { Readable, addAbortSignal } from 'node:stream';
import {
  TOKENS,
  inject,
  injectable,
  isAbortError,
  type AdapterContext,
  type GetOptions,
  type HealthResult,
  type PutOptions,
  type PutResult,
  type StorageAdapter,
  type StorageObjectInfo,
} from '@holdfast/sdk';
import { chunkBytes, type DropboxStorageConfig } from './config.js';
import { DropboxApi } from './internal/api.js';
import { DropboxApiError, aborted, notFound, toAdapterError } from './internal/errors.js';
import { listFiles } from './internal/list.js';
import { pathOf } from './internal/paths.js';
import { uploadFile, type DropboxFileMetadata, type SessionObserver } from './internal/upload.js';

const CHECK_TIMEOUT_MS = 9_000;

/** A destination in a Dropbox folder, reached over the HTTP API v2 with the tokens of an OAUTH credential profile. */
@injectable()
export class DropboxStorage implements StorageAdapter {
  private client?: DropboxApi;
  /** Test and diagnostics hook: told the id of each upload session when it starts. */
  onUploadSession?: SessionObserver;

  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: DropboxStorageConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}

  /** The API client, built on first use; throws CONFIG when no OAUTH profile is assigned. */
  private api(): DropboxApi {
    this.client ??= new DropboxApi(this.config, this.context);
    this.client.tokens.profile();
    return this.client;
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    const where = `Dropbox folder ${this.config.root || '/'}`;
    try {
      const api = this.api();
      const signal = AbortSignal.timeout(CHECK_TIMEOUT_MS);
      try {
        await api.rpc('files/list_folder', { path: this.config.root, recursive: false, limit: 1 }, signal);
      } catch (error) {
        // A root that does not exist yet is fine: the first upload creates it.
        if (!(error instanceof DropboxApiError && error.isNotFound)) throw error;
      }
      // Proves the content-write scope without leaving anything: an uncommitted session is never visible.
      await api.upload('files/upload_session/start', { close: false }, new Uint8Array(0), signal);
      return { ok: true, message: `${where}: token valid, listing and uploading allowed (probe session left uncommitted)`, latencyMs: Date.now() - started };
    } catch (error) {
      return { ok: false, message: toAdapterError(error, `check of ${where} failed`).message, latencyMs: Date.now() - started };
    }
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<PutResult> {
    let path: string;
    let api: DropboxApi;
    try {
      path = pathOf(this.config.root, key);
      api = this.api();
    } catch (error) {
      body.destroy();
      throw error;
    }
    const source = options.signal ? addAbortSignal(options.signal, body) : body;
    try {
      const file = await uploadFile(api, path, source, { chunkBytes: chunkBytes(this.config), signal: options.signal, onSession: this.onUploadSession });
      return { key, size: file.size };
    } catch (error) {
      body.destroy();
      if (options.signal?.aborted || isAbortError(error)) throw aborted(`put of "${key}"`, error);
      throw toAdapterError(error, `put of "${key}" failed (nothing was committed)`);
    }
  }

  async get(key: string, options: GetOptions = {}): Promise<Readable> {
    const path = pathOf(this.config.root, key);
    const { range } = options;
    const header = range ? `bytes=${range.start}-${range.end ?? ''}` : undefined;
    try {
      const response = await this.api().download(path, header, options.signal);
      if (range && response.status !== 206) {
        await response.body?.cancel();
        throw toAdapterError(new DropboxApiError(response.status, 'range request not answered with 206', null), `range read of "${key}"`);
      }
      return Readable.fromWeb(response.body as import('node:stream/web').ReadableStream<Uint8Array>);
    } catch (error) {
      if (error instanceof DropboxApiError && error.isNotFound) throw notFound(key);
      if (options.signal?.aborted) throw aborted(`read of "${key}"`, error);
      throw toAdapterError(error, `cannot read "${key}"`);
    }
  }

  async *list(prefix: string, options: { signal?: AbortSignal } = {}): AsyncIterable<StorageObjectInfo> {
    yield* listFiles(this.api(), this.config.root, prefix, options.signal);
  }

  async stat(key: string): Promise<StorageObjectInfo> {
    const path = pathOf(this.config.root, key);
    try {
      const meta = await this.api().rpc<DropboxFileMetadata>('files/get_metadata', { path });
      if (meta['.tag'] !== 'file') throw notFound(key);
      return { key, size: meta.size, modifiedAt: new Date(meta.server_modified) };
    } catch (error) {
      if (error instanceof DropboxApiError && error.isNotFound) throw notFound(key);
      throw toAdapterError(error, `cannot stat "${key}"`);
    }
  }

  async delete(key: string): Promise<void> {
    const path = pathOf(this.config.root, key);
    try {
      await this.api().rpc('files/delete_v2', { path });
    } catch (error) {
      // Idempotent: a key that is already gone is what delete wants.
      if (error instanceof DropboxApiError && error.isNotFound) return;
      throw toAdapterError(error, `cannot delete "${key}"`);
    }
  }

  async dispose(): Promise<void> {
    this.client = undefined;
  }
}
