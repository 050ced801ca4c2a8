import type { Readable } from 'node:stream';
import { awaitFirstByte, HttpError, isAdapterError, normalizeStorageKey, ConflictError, NotFoundError, ValidationError, type AuditEntry, type AuditWriter, type BackupReader, type KernelLogger, type OpenedBackup } from '@holdfast/kernel';
import { type DownloadGrant, type DownloadTokenRecord } from './download-tokens.js';
import { listFiles, type FileEntry } from './file-listing.js';
import type { StorageListCache } from './list-cache.js';
import type { DownloadTokens } from './shared-download-tokens.js';
import { isSidecarKey, readSidecarObject, SIDECAR_EXTENSION, writeLockedFlag } from './sidecar-file.js';
import { unreachableStorage, type OpenStorage, type StorageAccess } from './storage-access.js';

/** Who asked, for the audit log. */
export type AuditActor = Pick<AuditEntry, 'userId' | 'ipAddress' | 'userAgent'>;

/** What the storage browser needs from the rest of the server (kernel ports, resolved lazily). */
export interface StorageBrowserDeps {
  access: StorageAccess;
  cache: StorageListCache;
  tokens: DownloadTokens;
  reader: () => BackupReader;
  audit: () => AuditWriter | undefined;
  logger: KernelLogger;
}

/** A listing and where it came from. */
export interface Listing {
  files: FileEntry[];
  cachedAt: Date;
  isFromCache: boolean;
}

/** A file key from a request: validated (no traversal), and a backup rather than one of its sidecars. */
export function backupKey(file: string): string {
  try {
    normalizeStorageKey(file);
  } catch (error) {
    throw new ValidationError(`file: ${(error as Error).message.replace(/^\[[^\]]+\] /, '')}`);
  }
  if (isSidecarKey(file)) throw new ValidationError(`file: "${file}" is a metadata sidecar, not a backup`);
  return file;
}

/** How long a download URL's private key is held: the token's own lifetime (5 minutes) and a margin. */
const HELD_KEY_MS = 6 * 60 * 1000;

/** The storage browser's operations; the routes only parse, authorise and shape answers. */
export class StorageBrowser {
  /**
   * Private keys of download URLs for public-key backups (issue 45), by token, in this process's memory only: never
   * in the token table, the audit log or a log line. Dropped when the download completes or the time is up.
   */
  private readonly heldKeys = new Map<string, { privateKey: string; expiresAt: number }>();

  constructor(private readonly deps: StorageBrowserDeps) {}

  async list(configId: string, options: { refresh: boolean; signal?: AbortSignal }): Promise<Listing> {
    return this.deps.access.with(configId, async (storage) => {
      if (!options.refresh) {
        const cached = await this.deps.cache.get(configId);
        if (cached) return { ...cached, isFromCache: true };
      }
      let files: FileEntry[];
      try {
        files = await listFiles(storage, this.deps.logger, options.signal);
      } catch (error) {
        if (options.signal?.aborted) throw error;
        throw unreachableStorage(storage.name, error);
      }
      await this.deps.cache.put(configId, files);
      return { files, cachedAt: new Date(), isFromCache: false };
    });
  }

  /** Checks the file and the download rules by opening it once (the stream is dropped at once), then issues a token. */
  async createDownloadUrl(configId: string, grant: Omit<DownloadGrant, 'storageId'> & { privateKey?: string }, actor: AuditActor, signal?: AbortSignal): Promise<DownloadTokenRecord> {
    const file = backupKey(grant.file);
    await this.deps.access.resolve(configId);
    // Opening checks a public-key backup's private key against its header: missing or wrong is a 400 here.
    const opened = await this.openBackup(configId, { ...grant, file }, signal);
    opened.stream.destroy();
    const record = await this.deps.tokens.issue({ storageId: configId, file, decrypt: grant.decrypt, database: grant.database, path: grant.path });
    if (grant.privateKey !== undefined) this.holdKey(record.token, grant.privateKey);
    await this.audit({
      ...actor,
      action: 'storage.download-url',
      resource: 'storage',
      resourceId: configId,
      details: { file, decrypt: grant.decrypt, database: grant.database ?? null, path: grant.path ?? null },
    });
    return record;
  }

  /**
   * Claims the token (one download in flight per token), opens the file it grants and waits for its first decoded
   * byte, so a failure to read or decrypt is a 500 before any header is sent and leaves the token usable. Once
   * streaming, the token stays in flight until the stream settles; it is then consumed if every byte was handed to
   * the response, and released only if the download provably stopped short (see {@link settleTokenWith}).
   */
  async openDownload(token: string, signal?: AbortSignal): Promise<OpenedBackup> {
    const record = await this.deps.tokens.claim(token);
    let opened: OpenedBackup;
    try {
      const held = this.heldKeys.get(token);
      opened = await this.openBackup(record.storageId, held && held.expiresAt > Date.now() ? { ...record, privateKey: held.privateKey } : record, signal);
      await awaitFirstByte(opened.stream, signal);
    } catch (error) {
      await this.settleToken('release', token);
      throw new HttpError(500, `Download failed: ${(error as Error).message}`);
    }
    settleTokenWith(opened.stream, opened.size, () => void this.settleToken('consume', token), () => void this.settleToken('release', token));
    return opened;
  }

  private holdKey(token: string, privateKey: string): void {
    const now = Date.now();
    for (const [held, entry] of this.heldKeys) if (entry.expiresAt <= now) this.heldKeys.delete(held);
    this.heldKeys.set(token, { privateKey, expiresAt: now + HELD_KEY_MS });
  }

  /** Releases or consumes a token; a failure is logged (the token then stays in flight until it expires). */
  private async settleToken(action: 'release' | 'consume', token: string): Promise<void> {
    if (action === 'consume') this.heldKeys.delete(token);
    await this.deps.tokens[action](token).catch((error: unknown) => this.deps.logger.warn({ err: error }, `could not ${action} a download token`));
  }

  private async openBackup(storageId: string, grant: Omit<DownloadGrant, 'storageId'> & { privateKey?: string }, signal?: AbortSignal): Promise<OpenedBackup> {
    try {
      return await this.deps.reader().open(storageId, grant.file, { decrypt: grant.decrypt, database: grant.database, path: grant.path, privateKey: grant.privateKey, signal });
    } catch (error) {
      if (isAdapterError(error) && error.code === 'NOT_FOUND') throw new NotFoundError(`File "${grant.file}" not found`);
      throw error;
    }
  }

  /**
   * Sets the sidecar's `locked` flag; a backup without a sidecar cannot be locked (retention never sees it anyway).
   * On an object-locked destination the backup object also gets (or loses) the store's legal hold, set before the
   * flag and removed before it, so a failure in between always leaves the backup protected (docs/immutability.md).
   */
  async setLocked(configId: string, fileName: string, isLocked: boolean, actor: AuditActor, signal?: AbortSignal): Promise<void> {
    const file = backupKey(fileName);
    await this.deps.access.with(configId, async (storage) => {
      await this.requireFile(storage, file);
      const raw = await readSidecarObject(storage.adapter, file, signal);
      if (!raw) throw new ConflictError(`"${file}" has no ${SIDECAR_EXTENSION} sidecar to record the lock in`);
      await storage.adapter.setLegalHold?.(file, isLocked, { signal });
      await writeLockedFlag(storage.adapter, file, raw, isLocked, signal);
    });
    await this.deps.cache.invalidate(configId);
    await this.audit({ ...actor, action: isLocked ? 'storage.lock' : 'storage.unlock', resource: 'storage', resourceId: configId, details: { file } });
  }

  /** Deletes a backup and its sidecars; a locked backup is refused with 409. */
  async delete(configId: string, fileName: string, actor: AuditActor, signal?: AbortSignal): Promise<void> {
    const file = backupKey(fileName);
    await this.deps.access.with(configId, async (storage) => {
      await this.requireFile(storage, file);
      const raw = await readSidecarObject(storage.adapter, file, signal);
      if (raw?.['locked'] === true) throw new ConflictError(`"${file}" is locked; unlock it before deleting`);
      // The backup first: a crash in between leaves an orphan sidecar (harmless) rather than an unlisted backup.
      try {
        await storage.adapter.delete(file);
      } catch (error) {
        // The store refuses while an object lock holds (retain-until date or legal hold): the message names it.
        if (isAdapterError(error) && error.code === 'LOCKED') throw new ConflictError(`Cannot delete yet: ${error.message.replace(/^\[[^\]]+\] /, '')}`);
        throw error;
      }
      await storage.adapter.delete(`${file}${SIDECAR_EXTENSION}`);
      await storage.adapter.delete(`${file}.index.json`);
    });
    await this.deps.cache.invalidate(configId);
    await this.audit({ ...actor, action: 'storage.delete', resource: 'storage', resourceId: configId, details: { file } });
  }

  private async requireFile(storage: OpenStorage, file: string): Promise<void> {
    try {
      await storage.adapter.stat(file);
    } catch (error) {
      if (isAdapterError(error) && error.code === 'NOT_FOUND') throw new NotFoundError(`File "${file}" not found`);
      throw error;
    }
  }

  private async audit(entry: AuditEntry): Promise<void> {
    await this.deps.audit()?.write(entry).catch((error: unknown) => this.deps.logger.warn({ err: error }, 'audit write failed'));
  }
}

/**
 * Settles a download's token once its stream ends, fails or closes, by what reached the response rather than by
 * which event came first. Complete means the stream ended, or (with a known size, sent as Content-Length) every
 * byte was handed to the response: a client that has them all may close its socket before the response reports
 * `finish`, and that abort must not give it the file a second time (issue 40). Anything short of that is a download
 * that provably did not complete (a read error, or a client gone mid-file), and the token stays valid for a retry.
 *
 * The bytes are counted on the stream's own `data` events, the ones `pipe()` writes to the response. The listener
 * is added after {@link awaitFirstByte} has paused the stream, so it does not start the flow before the response
 * is attached.
 */
function settleTokenWith(stream: Readable, size: number | undefined, consume: () => void, release: () => void): void {
  let handedOver = 0;
  let hasEnded = false;
  let isSettled = false;
  const isComplete = () => hasEnded || (size !== undefined && handedOver >= size);
  const settle = () => {
    if (isSettled) return;
    isSettled = true;
    stream.off('data', count);
    if (isComplete()) consume();
    else release();
  };
  const count = (chunk: Buffer | string) => {
    handedOver += chunk.length;
  };
  stream.on('data', count);
  stream.once('end', () => {
    hasEnded = true;
    settle();
  });
  stream.once('error', settle);
  stream.once('close', settle);
}
