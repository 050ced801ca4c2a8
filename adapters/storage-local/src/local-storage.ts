import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { constants } from 'node:fs';
import { open, readdir, stat, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
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
import { assertFolderConfined, checkRootPolicy, confinedFile, realPathOrMissing } from './internal/confinement.js';
import { removeEmptyParents } from './internal/directories.js';
import { LOCAL_ORIGIN, notFound, toAdapterError } from './internal/errors.js';
import { KeyPaths, TEMP_FILE_PATTERN } from './internal/paths.js';
import { walkObjects } from './internal/walk.js';

const MISSING = new Set(['ENOENT', 'ENOTDIR']);

function isMissing(error: unknown): boolean {
  return MISSING.has((error as { code?: string }).code ?? '');
}

/** A destination in a local (or mounted) directory. */
@injectable()
export class LocalStorage implements StorageAdapter {
  private readonly paths: KeyPaths;
  private realRootCheck?: Promise<string>;

  constructor(
    @inject(TOKENS.AdapterConfig) config: LocalStorageConfig,
    @inject(TOKENS.AdapterContext) private readonly context: AdapterContext,
  ) {
    this.paths = new KeyPaths(config.path);
  }

  /**
   * The root's real path, after the host's local path rule accepted it (checked at use, not only when saved: a
   * symlink or a setting may have changed since). Every operation stays inside it; links leading out are ignored.
   */
  private realRoot(): Promise<string> {
    this.realRootCheck ??= (async () => {
      await checkRootPolicy(this.paths.root, this.context.localPaths);
      await this.paths.assertRoot();
      const real = await realPathOrMissing(this.paths.root);
      if (real === undefined) throw toAdapterError(Object.assign(new Error('missing'), { code: 'ENOENT' }), `root directory ${this.paths.root} is not accessible`);
      return real;
    })();
    // A failure (an unmounted drive) is not remembered: the next call looks again.
    this.realRootCheck.catch(() => (this.realRootCheck = undefined));
    return this.realRootCheck;
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    try {
      await this.realRoot();
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
      await assertFolderConfined(dirname(target), await this.realRoot(), key);
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
    const file = await this.confined(key);
    let handle;
    try {
      // O_NOFOLLOW: the resolved path has no link left; a link swapped in meanwhile is refused, not followed.
      handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW);
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
    const realRoot = await this.realRoot();
    yield* walkObjects({ directory, keyPrefix, prefix, root: this.paths.root, realRoot, signal: options.signal });
  }

  async stat(key: string): Promise<StorageObjectInfo> {
    const file = await this.confined(key);
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
      // unlink never follows the file itself; a symlinked folder on the way could lead out of the root.
      await assertFolderConfined(dirname(file), await this.realRoot(), key);
      await unlink(file);
    } catch (error) {
      // Missing, or a folder of other keys: either way no object has this key, and delete is idempotent.
      if (isMissing(error) || (error as { code?: string }).code === 'EISDIR') return;
      if (error instanceof AdapterError) throw error;
      throw toAdapterError(error, `cannot delete "${key}"`);
    }
    await removeEmptyParents(dirname(file), this.paths.root);
  }

  /** Removes the hidden temp files of interrupted puts of `key` (`.<name>.<16 hex>.partial` beside it). */
  async removeIncomplete(key: string): Promise<void> {
    const file = this.paths.fileOf(key);
    const folder = dirname(file);
    const names = await readdir(folder).catch((error: unknown) => {
      if (isMissing(error)) return [] as string[];
      throw toAdapterError(error, `cannot list the folder of "${key}"`);
    });
    const prefix = `.${basename(file)}.`;
    for (const name of names) {
      if (name.startsWith(prefix) && TEMP_FILE_PATTERN.test(name) && name.length === prefix.length + 16 + '.partial'.length) {
        await unlink(join(folder, name)).catch((error: unknown) => {
          if (!isMissing(error)) throw toAdapterError(error, `cannot remove a temporary file of "${key}"`);
        });
      }
    }
    await removeEmptyParents(folder, this.paths.root);
  }

  /** The real file of a key inside the root; a missing file or a link leading out of the root is NOT_FOUND. */
  private async confined(key: string): Promise<string> {
    const file = this.paths.fileOf(key);
    const realRoot = await this.realRoot();
    let real: string | undefined;
    try {
      real = await confinedFile(file, realRoot);
    } catch (error) {
      throw toAdapterError(error, `cannot read "${key}"`);
    }
    if (real === undefined) throw notFound(key);
    return real;
  }
}
