import { mkdir, mkdtemp, open, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { addAbortSignal, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AdapterError, resolveByteRange, type ByteRange, type StorageObjectInfo } from '@holdfast/sdk';
import type { RsyncStorageConfig } from '../config.js';
import type { PutTarget, RsyncBackend } from './backend.js';
import { RSYNC_ORIGIN, aborted, notFound, rsyncError } from './errors.js';
import { joinPath } from './keys.js';
import { objectOf, parseListLine } from './listing.js';
import { startRsync } from './rsync-process.js';

/** Escapes rsync filter wildcards (a backslash escapes them when the pattern has any). */
function filterLiteral(name: string): string {
  return name.replace(/[[*?]/g, '\\$&');
}

/**
 * An rsync daemon module (rsync://). The daemon protocol has no way to read from or write to a pipe (rsync skips a
 * FIFO as a "non-regular file" and replaces one given as the destination), so each put and get goes through one
 * private local spool file, streamed to or from disk (memory stays flat; disk needs the object's size) and removed
 * at once. The daemon writes a put into its own temp file and renames it when complete, so puts are atomic.
 */
export class DaemonBackend implements RsyncBackend {
  private readonly base: string;
  private readonly common: string[];

  constructor(
    private readonly config: RsyncStorageConfig,
    private readonly username: string,
    private readonly password: string | undefined,
  ) {
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    this.base = `rsync://${username}@${host}:${config.port ?? 873}/${joinPath(config.module ?? '', config.root)}`;
    this.common = [`--contimeout=${config.connectTimeoutSeconds}`, `--timeout=${config.ioTimeoutSeconds}`, '--no-h', '-8'];
  }

  private url(relative: string): string {
    return relative === '' ? `${this.base}/` : `${this.base}/${relative}`;
  }

  private get where(): string {
    return `${this.base.replace(/^rsync:\/\/[^@]*@/, 'rsync://')}`;
  }

  private async runToEnd(args: string[], what: string, signal?: AbortSignal): Promise<string> {
    const run = startRsync([...this.common, ...args], this.password, signal);
    let stdout = '';
    run.child.stdout?.setEncoding('utf8');
    run.child.stdout?.on('data', (chunk: string) => (stdout += chunk));
    const { code, stderr } = await run.exited;
    // A transfer that completed stands even when the abort came during its last moments: the object is complete.
    if (code === 0) return stdout;
    if (signal?.aborted) throw aborted(what);
    throw rsyncError(code, stderr, what);
  }

  private async spoolFolder(): Promise<string> {
    const parent = this.config.spoolDir ?? tmpdir();
    return mkdtemp(join(parent, 'holdfast-rsync-'));
  }

  async check(): Promise<string> {
    // -d without a trailing slash lists the root folder itself: read-only, and proves login, module and path.
    const root = this.config.root === '' ? `${this.base}/.` : this.base;
    const out = await this.runToEnd(['--list-only', '-d', root], `check of ${this.where} failed`);
    if (!parseListLine(out.split('\n')[0] ?? '')?.path) throw new AdapterError(RSYNC_ORIGIN, 'NOT_FOUND', `check of ${this.where} failed: no folder there`);
    if (!out.startsWith('d')) throw new AdapterError(RSYNC_ORIGIN, 'CONFIG', `check of ${this.where} failed: it is a file, not a folder`);
    return `${this.where} is a readable folder (write access is proven by the first backup; check() writes nothing)`;
  }

  async put(target: PutTarget, body: Readable, options: { size?: number; signal?: AbortSignal }): Promise<number> {
    const { signal } = options;
    signal?.throwIfAborted();
    const spool = await this.spoolFolder();
    try {
      // -R recreates "<parent>/<name>" below the root, creating parent folders on any rsync 3 daemon.
      const local = join(spool, target.parent, target.name);
      await mkdir(join(spool, target.parent), { recursive: true, mode: 0o700 });
      const file = await open(local, 'wx', 0o600);
      await pipeline(body, file.createWriteStream(), { signal });
      const size = (await stat(local)).size;
      const sending = Date.now();
      try {
        // --ignore-times: rsync's quick check would skip an overwrite of the same size written within the same second.
        const source = joinPath(spool, '.', target.parent, target.name);
        await this.runToEnd(['-R', '--ignore-times', '--', source, this.url('')], `put of "${target.key}" failed`, signal);
      } catch (error) {
        if (!signal?.aborted || !(await this.landedAnyway(target.key, size, sending))) throw error;
      }
      return size;
    } catch (error) {
      body.destroy();
      if (signal?.aborted) throw aborted(`put of "${target.key}"`);
      throw error;
    } finally {
      await rm(spool, { recursive: true, force: true });
    }
  }

  /**
   * The daemon renames a received file into place before the client exits, so an abort in the last moments of a
   * transfer can stop rsync after the object already landed. Then the put happened: an object of the sent size,
   * written since the transfer began, is this put's (listing times have whole seconds, hence the slack).
   */
  private async landedAnyway(key: string, size: number, since: number): Promise<boolean> {
    const found = await this.stat(key).catch(() => undefined);
    return found !== undefined && found.size === size && found.modifiedAt.getTime() >= since - 2_000;
  }

  async stat(key: string): Promise<StorageObjectInfo> {
    let out: string;
    try {
      out = await this.runToEnd(['--list-only', '--', this.url(key)], `cannot stat "${key}"`);
    } catch (error) {
      throw error instanceof AdapterError && error.code === 'NOT_FOUND' ? notFound(key) : error;
    }
    const entry = parseListLine(out.split('\n')[0] ?? '');
    if (!entry?.isFile) throw notFound(key);
    return { key, size: entry.size, modifiedAt: entry.modifiedAt };
  }

  async get(key: string, options: { range?: ByteRange; signal?: AbortSignal }): Promise<Readable> {
    const spool = await this.spoolFolder();
    try {
      const local = join(spool, 'object');
      try {
        await this.runToEnd(['--', this.url(key), local], `cannot read "${key}"`, options.signal);
      } catch (error) {
        throw error instanceof AdapterError && error.code === 'NOT_FOUND' ? notFound(key) : error;
      }
      // A folder is skipped by rsync without -r, leaving no file: no key names a folder.
      const size = (await stat(local).catch(() => undefined))?.size;
      if (size === undefined) throw notFound(key);
      const range = resolveByteRange(RSYNC_ORIGIN, key, size, options.range);
      const handle = await open(local, 'r');
      const stream = handle.createReadStream({ start: range.start, end: range.end });
      return options.signal ? addAbortSignal(options.signal, stream) : stream;
    } finally {
      // The open descriptor keeps the data readable; the name is gone at once, so nothing outlives the read.
      await rm(spool, { recursive: true, force: true });
    }
  }

  async *list(folderKey: string, prefix: string, signal?: AbortSignal): AsyncIterable<StorageObjectInfo> {
    signal?.throwIfAborted();
    const run = startRsync([...this.common, '--list-only', '-r', '--', this.url(folderKey)], this.password, signal);
    try {
      for await (const line of createInterface({ input: run.child.stdout!, crlfDelay: Infinity })) {
        const entry = parseListLine(line);
        const object = entry && objectOf(entry, folderKey, prefix);
        if (object) yield object;
      }
      const { code, stderr } = await run.exited;
      if (signal?.aborted) throw aborted(`listing "${prefix}"`);
      if (code === 0) return;
      const error = rsyncError(code, stderr, `cannot list "${prefix}"`);
      if (error.code !== 'NOT_FOUND' || folderKey === '') throw error;
      // A missing sub-folder is an empty listing, but only when the root itself is there.
      await this.runToEnd(['--list-only', '-d', this.config.root === '' ? `${this.base}/.` : this.base], `cannot list "${prefix}"`);
    } finally {
      await run.stop();
    }
  }

  async delete(key: string, parent: string): Promise<void> {
    try {
      await this.stat(key);
    } catch (error) {
      // Idempotent: a missing key (or a folder, which no key names) is already gone.
      if (error instanceof AdapterError && error.code === 'NOT_FOUND') return;
      throw error;
    }
    // The daemon protocol has no "remove": sync an empty folder over the parent with --delete, limited by filters
    // to this one name, so nothing else in the folder is touched.
    const empty = await this.spoolFolder();
    try {
      const name = key.slice(key.lastIndexOf('/') + 1);
      await this.runToEnd(['-r', '--delete', `--include=/${filterLiteral(name)}`, '--exclude=*', '--', `${empty}/`, this.url(parent === '' ? '' : `${parent}/`)], `cannot delete "${key}"`);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  }

  async dispose(): Promise<void> {
    // Every transfer is its own rsync process; nothing stays open between operations.
  }
}
