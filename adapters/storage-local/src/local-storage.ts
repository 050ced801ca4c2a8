import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
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
  resolveByteRange,
} from '@holdfast/sdk';
import type { LocalStorageConfig } from './config.js';
import { writeAtomically } from './internal/atomic-write.js';
import { removeEmptyParents } from './internal/directories.js';
import { LOCAL_ORIGIN, notFound, toAdapterError } from './internal/errors.js';
import { KeyPaths } from './internal/paths.js';
import { walkObjects } from './internal/walk.js';

const MISSING = new Set(['ENOENT', 'ENOTDIR']);

function isMissing(error: unknown): boolean {
  return MISSING.has((error as { code?: string }).code ?? '');
}

/** A destination in a local (or mounted) directory. */
@injectable()
export class LocalStorage implements StorageAdapter {
  private readonly paths: KeyPaths;

  constructor(
    @inject(TOKENS.AdapterConfig) config: LocalStorageConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {
    this.paths = new KeyPaths(config.path);
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    try {
      await this.paths.assertRoot();
      // A real write proves more than access(2), which always passes for root.
      const probe = join(this.paths.root, `.holdfast-check.${randomBytes(8).toString('hex')}.partial`);
      await writeFile(probe, 'holdfast');
      await unlink(probe);
      return { ok: true, message: `${this.paths.root} is a writable directory`, latencyMs: Date.now() - started };
    } catch (error) {
      const wrapped = error instanceof AdapterError ? error : toAdapterError(error, `cannot write to ${this.paths.root}`);
      return { ok: false, message: wrapped.message, latencyMs: Date.now() - started };
    }
  }

  async put(key: string, body: Readable, options: PutOptions = {}): Promise<PutResult> {
    let target: string;
    try {
      target = this.paths.fileOf(key);
      await this.paths.assertRoot();
    } catch (error) {
      body.destroy();
      throw error;
    }
    try {
      const size = await writeAtomically(target, this.paths.root, body, options.signal);
      return { key, size };
    } catch (error) {
      this.context.logger.warn({ key, err: error }, 'local storage put failed; temporary file removed');
      throw toAdapterError(error, `put of "${key}" failed`);
    }
  }

  async get(key: string, options: GetOptions = {}): Promise<Readable> {
    const file = this.paths.fileOf(key);
    let handle;
    try {
      handle = await open(file, 'r');
    } catch (error) {
      if (isMissing(error) || (error as { code?: string }).code === 'EISDIR') throw notFound(key);
      throw toAdapterError(error, `cannot read "${key}"`);
    }
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw notFound(key);
      const range = resolveByteRange(LOCAL_ORIGIN, key, info.size, options.range);
      return createReadStream(file, { fd: handle, ...range, signal: options.signal });
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async *list(prefix: string, options: { signal?: AbortSignal } = {}): AsyncIterable<StorageObjectInfo> {
    const { directory, keyPrefix } = this.paths.listingStart(prefix);
    await this.paths.assertRoot();
    yield* walkObjects({ directory, keyPrefix, prefix, root: this.paths.root, signal: options.signal });
  }

  async stat(key: string): Promise<StorageObjectInfo> {
    const file = this.paths.fileOf(key);
    try {
      const info = await stat(file);
      if (!info.isFile()) throw notFound(key);
      return { key, size: info.size, modifiedAt: info.mtime };
    } catch (error) {
      if (isMissing(error)) throw notFound(key);
      throw error instanceof AdapterError ? error : toAdapterError(error, `cannot stat "${key}"`);
    }
  }

  async delete(key: string): Promise<void> {
    const file = this.paths.fileOf(key);
    try {
      await unlink(file);
    } catch (error) {
      // Missing, or a folder of other keys: either way no object has this key, and delete is idempotent.
      if (isMissing(error) || (error as { code?: string }).code === 'EISDIR') return;
      throw toAdapterError(error, `cannot delete "${key}"`);
    }
    await removeEmptyParents(dirname(file), this.paths.root);
  }
}
