import type { Readable } from 'node:stream';
import type { ContainerClient } from '@azure/storage-blob';
import {
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
import type { AzureBlobStorageConfig } from './config.js';
import { containerClient, describeTarget, resolveLogin, secretsOf, type AzureLogin } from './internal/client.js';
import { openBlobRead } from './internal/download.js';
import { notFound, toAdapterError } from './internal/errors.js';
import { probeContainer } from './internal/health.js';
import { blobNameOf, listingPrefixOf, rootPrefixOf } from './internal/keys.js';
import { listBlobs } from './internal/list.js';
import { uploadBlockBlob } from './internal/upload.js';

/** A destination in one container of an Azure Storage account (or Azurite), below an optional name prefix. */
@injectable()
export class AzureBlobStorage implements StorageAdapter {
  private readonly root: string;
  private login?: AzureLogin;
  private client?: ContainerClient;

  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: AzureBlobStorageConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {
    this.root = rootPrefixOf(config.prefix);
  }

  /** Resolved on first use, so constructing never fails on missing credentials and never connects. */
  private credentials(): AzureLogin {
    this.login ??= resolveLogin(this.config, this.context);
    return this.login;
  }

  private async container(): Promise<ContainerClient> {
    this.client ??= await containerClient(this.credentials(), this.config.container, this.config.maxTries);
    return this.client;
  }

  private fail(error: unknown, what: string) {
    return toAdapterError(error, what, this.login ? secretsOf(this.login) : []);
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    let where = `container "${this.config.container}"`;
    try {
      const login = this.credentials();
      where = describeTarget(login, this.config.container);
      // One try only: a connection test should answer in seconds, not after the retry policy's back-off.
      await probeContainer(await containerClient(login, this.config.container, 1), this.root);
      const below = this.root ? ` below "${this.root}"` : '';
      return { ok: true, message: `${where} is readable and writable${below}`, latencyMs: Date.now() - started };
    } catch (error) {
      return { ok: false, message: this.fail(error, `check of ${where} failed`).message, latencyMs: Date.now() - started };
    }
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<PutResult> {
    try {
      const blob = (await this.container()).getBlockBlobClient(blobNameOf(this.root, key));
      const size = await uploadBlockBlob(blob, body, {
        blockSizeMiB: this.config.blockSizeMiB,
        concurrency: this.config.concurrency,
        tier: this.config.accessTier,
        size: options.size,
        signal: options.signal,
      });
      return { key, size };
    } catch (error) {
      body.destroy();
      const failure = this.fail(options.signal?.aborted ? options.signal.reason ?? error : error, `put of "${key}" failed`);
      this.context.logger.warn({ key, err: failure.message }, 'azure blob put failed; nothing was committed');
      throw failure;
    }
  }

  async get(key: string, options: GetOptions = {}): Promise<Readable> {
    try {
      return await openBlobRead((await this.container()).getBlobClient(blobNameOf(this.root, key)), key, options);
    } catch (error) {
      const failure = this.fail(error, `cannot read "${key}"`);
      throw failure.code === 'NOT_FOUND' && !isContainerMissing(failure) ? notFound(key) : failure;
    }
  }

  async *list(prefix: string, options: { signal?: AbortSignal } = {}): AsyncIterable<StorageObjectInfo> {
    try {
      yield* listBlobs(await this.container(), this.root, listingPrefixOf(this.root, prefix), options.signal);
    } catch (error) {
      throw this.fail(error, `cannot list "${prefix}"`);
    }
  }

  async stat(key: string): Promise<StorageObjectInfo> {
    try {
      const properties = await (await this.container()).getBlobClient(blobNameOf(this.root, key)).getProperties();
      return { key, size: properties.contentLength ?? 0, modifiedAt: properties.lastModified ?? new Date(0) };
    } catch (error) {
      const failure = this.fail(error, `cannot stat "${key}"`);
      throw failure.code === 'NOT_FOUND' && !isContainerMissing(failure) ? notFound(key) : failure;
    }
  }

  async delete(key: string): Promise<void> {
    try {
      // Idempotent: a missing blob is fine; a missing container is not (the destination is broken).
      await (await this.container()).getBlobClient(blobNameOf(this.root, key)).deleteIfExists({ deleteSnapshots: 'include' });
    } catch (error) {
      throw this.fail(error, `cannot delete "${key}"`);
    }
  }

  async dispose(): Promise<void> {
    // HTTP keep-alive sockets belong to the SDK's shared agent and close on their own when idle.
    this.client = undefined;
  }
}

function isContainerMissing(error: Error): boolean {
  return error.message.includes('container does not exist');
}
