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
import type { RcloneStorageConfig } from './config.js';
import { RCLONE_ORIGIN, exitError, isMissing, notFound, redact } from './internal/errors.js';
import { openRead } from './internal/download.js';
import { checkKey, listingFolderOf, remotePath, remoteRootOf } from './internal/keys.js';
import { listFolder, type LsjsonEntry } from './internal/list.js';
import { runRclone, startRclone, tryRclone } from './internal/process.js';
import { closeSession, openSession, type RcloneSession } from './internal/session.js';
import { uploadAtomically } from './internal/upload.js';

/** A destination on any rclone remote, driving the `rclone` binary (one short-lived process per operation). */
@injectable()
export class RcloneStorage implements StorageAdapter {
  private readonly root: string;
  private opening?: Promise<{ session: RcloneSession; folder: string }>;

  constructor(
    @inject(TOKENS.AdapterConfig) private readonly config: RcloneStorageConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {
    this.root = remoteRootOf(config.remote);
  }

  /** The private config file is written on first use, never in the constructor. */
  private async session(): Promise<RcloneSession> {
    this.opening ??= openSession(this.config);
    return (await this.opening).session;
  }

  private pathOf = (relative: string): string => remotePath(this.root, relative);

  /** Metadata of one object; NOT_FOUND for a missing key or a folder. */
  private async statEntry(key: string, signal?: AbortSignal): Promise<LsjsonEntry> {
    const session = await this.session();
    const run = startRclone(session, ['lsjson', '--stat', '--no-mimetype', '--', this.pathOf(key)], { signal });
    const chunks: Buffer[] = [];
    run.child.stdout?.on('data', (chunk: Buffer) => chunks.push(chunk));
    const exit = await run.exited;
    if (exit.code !== 0) {
      if (isMissing(exit)) throw notFound(key);
      throw exitError(exit, `cannot stat "${key}"`, session.secrets);
    }
    const entry = JSON.parse(Buffer.concat(chunks).toString('utf8')) as LsjsonEntry;
    if (entry.IsDir) throw notFound(key);
    return entry;
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    const where = redact(this.root, []);
    try {
      const session = await this.session();
      // Read-only on purpose: a probe file could not be removed again on an object-locked bucket.
      const out = await runRclone(session, ['lsjson', '--stat', '--no-mimetype', '--low-level-retries', '1', '--', this.root], `check of ${where} failed`);
      const entry = JSON.parse(out) as LsjsonEntry;
      if (!entry.IsDir) throw new AdapterError(RCLONE_ORIGIN, 'CONFIG', `check of ${where} failed: it is a file, not a folder`);
      return { ok: true, message: `${where} is a readable folder (write access is proven by the first backup; check() writes nothing)`, latencyMs: Date.now() - started };
    } catch (error) {
      const failure = error instanceof AdapterError ? error : new AdapterError(RCLONE_ORIGIN, 'TRANSIENT', String(error));
      const message = failure.code === 'NOT_FOUND' ? `[storage-rclone] check of ${where} failed: the folder does not exist (create it first)` : failure.message;
      return { ok: false, message: redact(message, (await this.opening)?.session.secrets ?? []), latencyMs: Date.now() - started };
    }
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<PutResult> {
    try {
      const { parent, name } = checkKey(key);
      const size = await uploadAtomically({ session: await this.session(), pathOf: this.pathOf, parent, name, key }, body, options);
      return { key, size };
    } catch (error) {
      body.destroy();
      const failure = toFailure(error, `put of "${key}" failed`, options.signal);
      this.context.logger.warn({ key, err: failure.message }, 'rclone put failed; temporary object removed');
      throw failure;
    }
  }

  async get(key: string, options: GetOptions = {}): Promise<Readable> {
    checkKey(key);
    const entry = await this.statEntry(key, options.signal);
    return openRead(await this.session(), this.pathOf(key), key, entry.Size, options);
  }

  async *list(prefix: string, options: { signal?: AbortSignal } = {}): AsyncIterable<StorageObjectInfo> {
    const folderKey = listingFolderOf(prefix);
    const session = await this.session();
    const outcome = yield* listFolder(session, this.pathOf(folderKey.replace(/\/$/, '')), folderKey, prefix, options.signal);
    if (outcome === 'listed' || folderKey === '') {
      if (outcome === 'missing') throw new AdapterError(RCLONE_ORIGIN, 'NOT_FOUND', `cannot list "${prefix}": the folder ${redact(this.root, session.secrets)} does not exist`);
      return;
    }
    // A missing sub-folder is an empty listing, but only when the root itself is there.
    const root = await tryRclone(session, ['lsjson', '--stat', '--no-mimetype', '--', this.root]);
    if (root.code === 0) return;
    if (!isMissing(root)) throw exitError(root, `cannot list "${prefix}"`, session.secrets);
    throw new AdapterError(RCLONE_ORIGIN, 'NOT_FOUND', `cannot list "${prefix}": the folder ${redact(this.root, session.secrets)} does not exist`);
  }

  async stat(key: string): Promise<StorageObjectInfo> {
    checkKey(key);
    const entry = await this.statEntry(key);
    return { key, size: entry.Size, modifiedAt: new Date(entry.ModTime) };
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    const session = await this.session();
    const exit = await tryRclone(session, ['deletefile', '--', this.pathOf(key)]);
    // Idempotent: a missing key (or a folder, which no key names) is already gone.
    if (exit.code === 0 || isMissing(exit)) return;
    throw exitError(exit, `cannot delete "${key}"`, session.secrets);
  }

  async dispose(): Promise<void> {
    const opened = this.opening;
    this.opening = undefined;
    if (opened) await closeSession((await opened).folder);
  }
}

function toFailure(error: unknown, what: string, signal?: AbortSignal): AdapterError {
  if (signal?.aborted) return error instanceof AdapterError && error.code === 'ABORTED' ? error : new AdapterError(RCLONE_ORIGIN, 'ABORTED', `${what}: aborted`);
  if (error instanceof AdapterError) return error;
  return new AdapterError(RCLONE_ORIGIN, 'TRANSIENT', `${what}: ${(error as Error)?.message ?? String(error)}`);
}
