import { Readable, addAbortSignal } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';
import {
  TOKENS,
  inject,
  injectable,
  isAbortError,
  normalizeStorageKey,
  normalizeStoragePrefix,
  type AdapterContext,
  type GetOptions,
  type HealthResult,
  type PutOptions,
  type PutResult,
  type StorageAdapter,
  type StorageObjectInfo,
} from '@holdfast/sdk';
import { chunkBytes, type GdriveStorageConfig } from './config.js';
import { DriveApi } from './internal/api.js';
import { DriveApiError, GDRIVE_ORIGIN, aborted, notFound, toAdapterError } from './internal/errors.js';
import { findFile, queryFiles, resolveFolder, type DriveFile } from './internal/files.js';
import { filesIn } from './internal/query.js';
import { uploadFile, type SessionObserver } from './internal/upload.js';

const CHECK_TIMEOUT_MS = 9_000;

function infoOf(key: string, file: DriveFile): StorageObjectInfo {
  return { key, size: Number(file.size ?? 0), modifiedAt: new Date(file.modifiedTime) };
}

/**
 * A destination in one Google Drive folder. Each object is one file in that folder whose name is the whole storage
 * key (`job/2024/db.tar.gz`; Drive allows "/" in names), so a lookup is one query and a listing one paged query.
 */
@injectable()
export class GdriveStorage implements StorageAdapter {
  private client?: DriveApi;
  private folderId?: string;
  private folderLookup?: Promise<string | undefined>;
  /** Test and diagnostics hook: told the URI of each resumable session when it starts. */
  onUploadSession?: SessionObserver;

  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: GdriveStorageConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {}

  private api(): DriveApi {
    this.client ??= new DriveApi(this.config, this.context);
    this.client.tokens.profile();
    return this.client;
  }

  private get where(): string {
    return `Drive folder ${this.config.parentFolderId}/${this.config.folderPath}`;
  }

  /** The backup folder's id; undefined when it does not exist and `create` is false. Cached once known. */
  private async folder(create: boolean, signal?: AbortSignal): Promise<string | undefined> {
    if (this.folderId) return this.folderId;
    // One creation at a time per instance: concurrent first puts would otherwise create same-named twin folders.
    const pending = (this.folderLookup ??= resolveFolder(this.api(), this.config.parentFolderId, this.config.folderPath, create, signal).finally(() => {
      this.folderLookup = undefined;
    }));
    const found = await pending;
    if (found === undefined && create) return this.folder(true, signal);
    this.folderId = found;
    return found;
  }

  private async lookup(key: string, signal?: AbortSignal): Promise<DriveFile> {
    const name = normalizeStorageKey(key, GDRIVE_ORIGIN);
    const folderId = await this.folder(false, signal);
    const file = folderId === undefined ? undefined : await findFile(this.api(), folderId, name, signal);
    if (!file) throw notFound(key);
    return file;
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    try {
      const signal = AbortSignal.timeout(CHECK_TIMEOUT_MS);
      // Read-only: the folder is looked up, never created; a missing one is created by the first upload.
      const folderId = await this.folder(false, signal);
      if (folderId !== undefined) await findFile(this.api(), folderId, '.holdfast-check', signal);
      const state = folderId === undefined ? 'folder not created yet (the first upload creates it)' : 'folder found and listable';
      return { ok: true, message: `${this.where}: token valid, ${state}`, latencyMs: Date.now() - started };
    } catch (error) {
      return { ok: false, message: toAdapterError(error, `check of ${this.where} failed`).message, latencyMs: Date.now() - started };
    }
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<PutResult> {
    let name: string;
    try {
      name = normalizeStorageKey(key, GDRIVE_ORIGIN);
      this.api();
    } catch (error) {
      body.destroy();
      throw error;
    }
    const source = options.signal ? addAbortSignal(options.signal, body) : body;
    try {
      const folderId = (await this.folder(true, options.signal))!;
      const existing = await findFile(this.api(), folderId, name, options.signal);
      const file = await uploadFile(this.api(), { folderId, name, existingId: existing?.id }, source, {
        chunkBytes: chunkBytes(this.config),
        signal: options.signal,
        onSession: this.onUploadSession,
      });
      return { key, size: Number(file.size ?? 0) };
    } catch (error) {
      body.destroy();
      if (options.signal?.aborted || isAbortError(error)) throw aborted(`put of "${key}"`, error);
      throw toAdapterError(error, `put of "${key}" to ${this.where} failed (nothing was stored)`);
    }
  }

  async get(key: string, options: GetOptions = {}): Promise<Readable> {
    try {
      const file = await this.lookup(key, options.signal);
      const { range } = options;
      const header = range ? `bytes=${range.start}-${range.end ?? ''}` : undefined;
      const response = await this.api().media(file.id, header, options.signal);
      if (range && response.status !== 206) {
        await response.body?.cancel();
        throw new DriveApiError(response.status, '', 'range request not answered with 206');
      }
      return Readable.fromWeb(response.body as ReadableStream<Uint8Array>);
    } catch (error) {
      if (error instanceof DriveApiError && error.isNotFound) throw notFound(key);
      if (options.signal?.aborted) throw aborted(`read of "${key}"`, error);
      throw toAdapterError(error, `cannot read "${key}"`);
    }
  }

  async *list(prefix: string, options: { signal?: AbortSignal } = {}): AsyncIterable<StorageObjectInfo> {
    const keyPrefix = normalizeStoragePrefix(prefix, GDRIVE_ORIGIN);
    const newest = new Map<string, DriveFile>();
    try {
      const folderId = await this.folder(false, options.signal);
      if (folderId === undefined) return;
      for await (const file of queryFiles(this.api(), filesIn(folderId), options.signal)) {
        if (!file.name.startsWith(keyPrefix) || !isValidKey(file.name)) continue;
        const seen = newest.get(file.name);
        if (!seen || seen.modifiedTime < file.modifiedTime) newest.set(file.name, file);
      }
    } catch (error) {
      throw toAdapterError(error, `cannot list "${prefix}" in ${this.where}`);
    }
    for (const [name, file] of newest) yield infoOf(name, file);
  }

  async stat(key: string): Promise<StorageObjectInfo> {
    try {
      return infoOf(key, await this.lookup(key));
    } catch (error) {
      throw toAdapterError(error, `cannot stat "${key}"`);
    }
  }

  async delete(key: string): Promise<void> {
    const name = normalizeStorageKey(key, GDRIVE_ORIGIN);
    try {
      const folderId = await this.folder(false);
      if (folderId === undefined) return;
      // Every file of that name: a concurrent double put may have left two.
      for await (const file of queryFiles(this.api(), filesIn(folderId, name))) {
        await this.api().json('DELETE', `files/${encodeURIComponent(file.id)}`).catch((error: unknown) => {
          if (!(error instanceof DriveApiError && error.isNotFound)) throw error;
        });
      }
    } catch (error) {
      throw toAdapterError(error, `cannot delete "${key}" from ${this.where}`);
    }
  }

  async dispose(): Promise<void> {
    this.client = undefined;
    this.folderId = undefined;
    this.folderLookup = undefined;
  }
}

function isValidKey(name: string): boolean {
  try {
    normalizeStorageKey(name, GDRIVE_ORIGIN);
    return true;
  } catch {
    return false;
  }
}
