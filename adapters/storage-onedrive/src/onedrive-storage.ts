import { Readable, addAbortSignal } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';
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
import { fragmentBytes, type OnedriveStorageConfig } from './config.js';
import { GraphApi, itemPath } from './internal/api.js';
import { GraphApiError, aborted, notFound, toAdapterError } from './internal/errors.js';
import { listFiles, segmentsOf } from './internal/list.js';
import { uploadFile, type DriveItem, type SessionObserver } from './internal/upload.js';

const CHECK_TIMEOUT_MS = 9_000;

/** A destination in a OneDrive folder, over Microsoft Graph with the tokens of an OAUTH credential profile. */
@injectable()
export class OnedriveStorage implements StorageAdapter {
  private client?: GraphApi;
  private readonly rootSegments: string[];
  /** Test and diagnostics hook: told the URL of each upload session when it starts. */
  onUploadSession?: SessionObserver;

  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: OnedriveStorageConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {
    this.rootSegments = config.folderPath === '' ? [] : config.folderPath.split('/');
  }

  private api(): GraphApi {
    this.client ??= new GraphApi(this.config, this.context);
    this.client.tokens.profile();
    return this.client;
  }

  private get where(): string {
    return `OneDrive ${this.config.driveId ? `drive ${this.config.driveId}` : '(signed-in user)'} folder /${this.config.folderPath}`;
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    try {
      const api = this.api();
      const signal = AbortSignal.timeout(CHECK_TIMEOUT_MS);
      // Read-only: the drive, then the folder (missing is fine: the first upload creates it).
      await api.json('GET', '', undefined, signal);
      let state = 'folder found';
      try {
        const folder = await api.json<DriveItem>('GET', itemPath(this.rootSegments), undefined, signal);
        if (!folder.folder) throw new GraphApiError(409, 'notAFolder', `${this.config.folderPath} is a file, not a folder`);
      } catch (error) {
        if (!(error instanceof GraphApiError && error.isNotFound)) throw error;
        state = 'folder not created yet (the first upload creates it)';
      }
      return { ok: true, message: `${this.where}: token valid, drive reachable, ${state}`, latencyMs: Date.now() - started };
    } catch (error) {
      return { ok: false, message: toAdapterError(error, `check of ${this.where} failed`).message, latencyMs: Date.now() - started };
    }
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<PutResult> {
    let path: string;
    let api: GraphApi;
    try {
      path = itemPath(segmentsOf(this.rootSegments, key));
      api = this.api();
    } catch (error) {
      body.destroy();
      throw error;
    }
    const source = options.signal ? addAbortSignal(options.signal, body) : body;
    try {
      const item = await uploadFile(api, path, source, {
        fragmentBytes: fragmentBytes(this.config),
        knownSize: options.size,
        signal: options.signal,
        onSession: this.onUploadSession,
      });
      return { key, size: item.size ?? 0 };
    } catch (error) {
      body.destroy();
      if (options.signal?.aborted || isAbortError(error)) throw aborted(`put of "${key}"`, error);
      throw toAdapterError(error, `put of "${key}" to ${this.where} failed (nothing was stored)`);
    }
  }

  async get(key: string, options: GetOptions = {}): Promise<Readable> {
    const path = itemPath(segmentsOf(this.rootSegments, key));
    const { range } = options;
    try {
      // /content answers 302 to a pre-authenticated download URL; fetch follows it with the Range header and drops
      // the Authorization header on the cross-origin hop.
      const response = await this.api().send(`${this.api().drive}/${path}/content`, { method: 'GET', headers: range ? { range: `bytes=${range.start}-${range.end ?? ''}` } : {} }, { signal: options.signal, untilHeaders: true });
      if (range && response.status !== 206) {
        await response.body?.cancel();
        throw new GraphApiError(response.status, '', 'range request not answered with 206');
      }
      return Readable.fromWeb(response.body as ReadableStream<Uint8Array>);
    } catch (error) {
      if (error instanceof GraphApiError && error.isNotFound) throw notFound(key);
      if (options.signal?.aborted) throw aborted(`read of "${key}"`, error);
      throw toAdapterError(error, `cannot read "${key}"`);
    }
  }

  async *list(prefix: string, options: { signal?: AbortSignal } = {}): AsyncIterable<StorageObjectInfo> {
    yield* listFiles(this.api(), this.rootSegments, prefix, options.signal);
  }

  async stat(key: string): Promise<StorageObjectInfo> {
    const path = itemPath(segmentsOf(this.rootSegments, key));
    try {
      const item = await this.api().json<DriveItem>('GET', path);
      if (!item.file) throw notFound(key);
      return { key, size: item.size ?? 0, modifiedAt: new Date(item.lastModifiedDateTime) };
    } catch (error) {
      if (error instanceof GraphApiError && error.isNotFound) throw notFound(key);
      throw toAdapterError(error, `cannot stat "${key}"`);
    }
  }

  async delete(key: string): Promise<void> {
    const path = itemPath(segmentsOf(this.rootSegments, key));
    try {
      await this.api().json('DELETE', path);
    } catch (error) {
      // Idempotent: itemNotFound means it is already gone.
      if (error instanceof GraphApiError && error.isNotFound) return;
      throw toAdapterError(error, `cannot delete "${key}" from ${this.where}`);
    }
  }

  async dispose(): Promise<void> {
    this.client = undefined;
  }
}
