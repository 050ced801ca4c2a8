import type { Readable } from 'node:stream';
import type { BlockBlobClient, ContainerClient } from '@azure/storage-blob';
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
import type { AzureBlobStorageConfig } from './config.js';
import { containerClient, describeTarget, resolveLogin, secretsOf, type AzureLogin } from './internal/client.js';
import { openBlobRead } from './internal/download.js';
import { AZURE_ORIGIN, notFound, toAdapterError } from './internal/errors.js';
import { containerImmutability, describeImmutability, isImmutableRefusal, lockOf, lockedError, policyFor, type BlobPolicy, type ContainerImmutability } from './internal/immutability.js';
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
      const properties = await probeContainer(await containerClient(login, this.config.container, 1), this.root);
      const below = this.root ? ` below "${this.root}"` : '';
      const immutability: ContainerImmutability = { enabled: properties.isImmutableStorageWithVersioningEnabled === true };
      const message = `${where} is readable and writable${below}. ${describeImmutability(immutability)}`;
      if (this.config.objectLockMode && !immutability.enabled) {
        return { ok: false, message: `${message}; objectLockMode ${this.config.objectLockMode} needs ${NEEDS_IMMUTABILITY}`, latencyMs: Date.now() - started };
      }
      return { ok: true, message, latencyMs: Date.now() - started };
    } catch (error) {
      return { ok: false, message: this.fail(error, `check of ${where} failed`).message, latencyMs: Date.now() - started };
    }
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<PutResult> {
    try {
      // Only backups get a policy (the caller says so); sidecars are rewritten later and must stay deletable.
      const policy = options.objectLock ? policyFor(this.config, options.objectLock.retainUntil) : undefined;
      const blob = (await this.container()).getBlockBlobClient(blobNameOf(this.root, key));
      const size = await uploadBlockBlob(blob, body, {
        blockSizeMiB: this.config.blockSizeMiB,
        concurrency: this.config.concurrency,
        tier: this.config.accessTier,
        size: options.size,
        signal: options.signal,
      });
      if (policy) await this.applyPolicy(blob, key, policy, options.signal);
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
      if (isImmutableRefusal(error)) {
        // 409 BlobImmutableDueToPolicy / BlobImmutableDueToLegalHold: name the date the blob itself reports.
        const blob = (await this.container()).getBlobClient(blobNameOf(this.root, key));
        throw lockedError(key, await lockOf(blob).catch(() => undefined));
      }
      throw this.fail(error, `cannot delete "${key}"`);
    }
  }

  /**
   * Sets or removes the legal hold of `key` (SPEC `locked`). Resolves false without a request when this destination
   * is not configured for immutability, so containers without it keep working unchanged.
   */
  async setLegalHold(key: string, isOn: boolean, options: { signal?: AbortSignal } = {}): Promise<boolean> {
    if (!this.config.objectLockMode) return false;
    try {
      await (await this.container()).getBlobClient(blobNameOf(this.root, key)).setLegalHold(isOn, { abortSignal: options.signal });
      return true;
    } catch (error) {
      const failure = this.fail(error, `cannot ${isOn ? 'set' : 'remove'} the legal hold of "${key}"`);
      throw failure.code === 'NOT_FOUND' && !isContainerMissing(failure) ? notFound(key) : failure;
    }
  }

  /**
   * At save: a config asking for immutability on a container that answers without version-level immutability support
   * is refused (CONFIG). An unreachable container passes: the connection test reports it.
   */
  async verifyConfig(options: { signal?: AbortSignal } = {}): Promise<void> {
    if (!this.config.objectLockMode) return;
    let enabled: boolean;
    try {
      enabled = await containerImmutability(await containerClient(this.credentials(), this.config.container, 1), options.signal ?? AbortSignal.timeout(CHECK_TIMEOUT_MS));
    } catch {
      return;
    }
    if (!enabled) {
      throw new AdapterError(AZURE_ORIGIN, 'CONFIG', `objectLockMode ${this.config.objectLockMode}: container "${this.config.container}" does not support version-level immutability (${NEEDS_IMMUTABILITY})`);
    }
  }

  /**
   * Gives a committed backup blob its immutability policy (Set Blob Immutability Policy). If that fails the blob is
   * removed again and the put fails: a put stores an immutable backup or nothing.
   */
  private async applyPolicy(blob: BlockBlobClient, key: string, policy: BlobPolicy, signal?: AbortSignal): Promise<void> {
    try {
      await blob.setImmutabilityPolicy({ expiriesOn: policy.retainUntil, policyMode: policy.mode }, { abortSignal: signal });
    } catch (error) {
      await blob.deleteIfExists().catch(() => undefined);
      const failure = this.fail(error, 'the service said');
      // A 4xx answer means this container or login cannot set policies: a config problem, not a passing one.
      const hint = failure.code === 'CONFIG' ? `; objectLockMode is set, so the container needs ${NEEDS_IMMUTABILITY}` : '';
      throw new AdapterError(AZURE_ORIGIN, failure.code, `put of "${key}" failed (nothing was stored): the immutability policy could not be set${hint} (${failure.message.replace(/^\[[^\]]+\] /, '')})`);
    }
  }

  async dispose(): Promise<void> {
    // HTTP keep-alive sockets belong to the SDK's shared agent and close on their own when idle.
    this.client = undefined;
  }
}

/** What an immutable destination needs from Azure, for messages. */
const NEEDS_IMMUTABILITY = 'a container with version-level immutability support (enable it on the container or the storage account, which requires blob versioning), or unset objectLockMode';
/** How long saving a config waits for the container's answer. */
const CHECK_TIMEOUT_MS = 15_000;

function isContainerMissing(error: Error): boolean {
  return error.message.includes('container does not exist');
}
