import { randomBytes } from 'node:crypto';
import { Readable, addAbortSignal } from 'node:stream';
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
import type { SmbStorageConfig } from './config.js';
import { openDownload } from './internal/download.js';
import { MISSING_STATUSES, SMB_ORIGIN, notFound, statusError, toAdapterError } from './internal/errors.js';
import { parseAllinfo } from './internal/listing.js';
import { joinRemote, listingStart, normalizeRoot, quote, remotePathOf } from './internal/paths.js';
import { Smbclient } from './internal/smbclient.js';
import { isHarmless, removeEmptyFolders, uploadAtomically } from './internal/upload.js';
import { walkObjects } from './internal/walk.js';

/** A destination in a folder of an SMB share; every operation is one or two short smbclient runs. */
@injectable()
export class SmbStorage implements StorageAdapter {
  private readonly smb: Smbclient;
  private readonly root: string;

  constructor(
    @inject(TOKENS.AdapterConfig) config: SmbStorageConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {
    this.smb = new Smbclient(config);
    this.root = normalizeRoot(config.path);
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    const where = `${this.smb.where}/${this.root}`;
    try {
      // A real write proves the login may store files here; the probe is named like a temp file and deleted right
      // after, so nothing stays behind (and a listing would hide it, should the delete fail).
      const probe = joinRemote(this.root, `.holdfast-check.${randomBytes(8).toString('hex')}.partial`);
      const child = this.smb.spawn([`allinfo ${quote(this.root || '/')}`, `put - ${quote(probe)}`], { hasInput: true });
      const finished = this.smb.finished(child);
      Readable.from([Buffer.from('holdfast')]).pipe(child.stdin as NodeJS.WritableStream).on('error', () => undefined);
      const run = await finished.finally(() => this.smb.run([`del ${quote(probe)}`]).catch(() => undefined));
      const failure = run.statuses[0];
      if (failure) {
        if (MISSING_STATUSES.has(failure.status)) throw new AdapterError(SMB_ORIGIN, 'NOT_FOUND', `the folder ${where} does not exist (${failure.line})`);
        throw statusError(failure, `check of ${where} failed`);
      }
      if (parseAllinfo(run.messages)?.isDirectory !== true) throw new AdapterError(SMB_ORIGIN, 'CONFIG', `${where} is not a folder`);
      return { ok: true, message: `${where} is a writable SMB folder`, latencyMs: Date.now() - started };
    } catch (error) {
      return { ok: false, message: toAdapterError(error, `check of ${where} failed`).message, latencyMs: Date.now() - started };
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
      const size = await uploadAtomically(this.smb, { root: this.root, parent: target.parent, name: target.name }, body, options.signal);
      return { key, size };
    } catch (error) {
      body.destroy();
      this.context.logger.warn({ key, err: (error as Error).message }, 'smb put failed; temporary file removed');
      throw toAdapterError(error, `put of "${key}" failed`);
    }
  }

  async get(key: string, options: GetOptions = {}): Promise<Readable> {
    const { path } = remotePathOf(this.root, key);
    try {
      const info = await this.info(key, path, options.signal);
      const range = resolveByteRange(SMB_ORIGIN, key, info.size, options.range);
      const stream = openDownload(this.smb, path, range.start ?? 0, range.end ?? info.size - 1);
      return options.signal ? addAbortSignal(options.signal, stream) : stream;
    } catch (error) {
      throw toAdapterError(error, `cannot read "${key}"`);
    }
  }

  async *list(prefix: string, options: { signal?: AbortSignal } = {}): AsyncIterable<StorageObjectInfo> {
    const folderKey = listingStart(prefix);
    yield* walkObjects({ smb: this.smb, root: this.root, folderKey, prefix, signal: options.signal });
  }

  async stat(key: string): Promise<StorageObjectInfo> {
    const { path } = remotePathOf(this.root, key);
    try {
      const info = await this.info(key, path);
      return { key, size: info.size, modifiedAt: info.modifiedAt };
    } catch (error) {
      throw toAdapterError(error, `cannot stat "${key}"`);
    }
  }

  async delete(key: string): Promise<void> {
    const { path, parent } = remotePathOf(this.root, key);
    try {
      // `del` takes no folders, so a key naming a folder of other keys deletes nothing; a missing file is done.
      const run = await this.smb.run([`del ${quote(path)}`, ...removeEmptyFolders(this.root, parent)]);
      const failure = run.statuses.find((status) => !isHarmless(status) && !MISSING_STATUSES.has(status.status));
      if (failure) throw statusError(failure, `cannot delete "${key}"`);
    } catch (error) {
      throw toAdapterError(error, `cannot delete "${key}"`);
    }
  }

  async dispose(): Promise<void> {
    this.smb.killAll();
  }

  /** Size and write time of a file; NOT_FOUND for a missing path or a folder. */
  private async info(key: string, path: string, signal?: AbortSignal) {
    const run = await this.smb.run([`allinfo ${quote(path)}`], signal);
    const failure = run.statuses[0];
    if (failure) throw MISSING_STATUSES.has(failure.status) ? notFound(key) : statusError(failure, `cannot read "${key}"`);
    const info = parseAllinfo(run.messages);
    if (!info || info.isDirectory) throw notFound(key);
    return info;
  }
}
