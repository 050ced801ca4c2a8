import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { Transform, addAbortSignal, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AdapterError, createByteCounter, resolveByteRange, type ByteRange, type StorageObjectInfo } from '@holdfast/sdk';
import type { RsyncBackend, PutTarget } from './backend.js';
import { RSYNC_ORIGIN, aborted, notFound, rsyncError } from './errors.js';
import { joinPath, shellQuote as q } from './keys.js';
import { objectOf, parseListLine } from './listing.js';
import { finished, run, type SshConnection } from './ssh-connection.js';

/** Exit codes of the check script. */
const NO_RSYNC = 10;
const NO_ROOT = 11;
const NOT_WRITABLE = 12;
/** The exit code of a listing travels on stdout (see `run` in ssh-connection.ts). */
const EXIT_PREFIX = '__holdfast_exit:';
/** Listing runs with UTC so the times rsync prints need no time zone. */
const LIST = 'TZ=UTC0 rsync --list-only --no-h -8';

/**
 * rsync over SSH without a local copy: rsync cannot read a stream, so a put streams the body over an exec channel
 * into `cat > temp` on the server, then a second command checks the size and renames it into place; listings and
 * stat use the server's rsync (`--list-only`); reads stream `cat` (or `tail -c | head -c` for ranges).
 */
export class SshBackend implements RsyncBackend {
  constructor(
    private readonly connection: SshConnection,
    private readonly root: string,
  ) {}

  private path(relative: string): string {
    return joinPath(this.root || '.', relative);
  }

  async check(): Promise<string> {
    const root = q(this.path(''));
    const script = `command -v rsync >/dev/null 2>&1 || exit ${NO_RSYNC}; [ -d ${root} ] || exit ${NO_ROOT}; [ -w ${root} ] || exit ${NOT_WRITABLE}; rsync --version | head -n 1`;
    const result = await run(this.connection, script);
    const where = `${this.path('')} on ${this.connection.where}`;
    if (result.code === NO_RSYNC) throw new AdapterError(RSYNC_ORIGIN, 'CONFIG', `rsync is not installed on ${this.connection.where} (install it there)`);
    if (result.code === NO_ROOT) throw new AdapterError(RSYNC_ORIGIN, 'NOT_FOUND', `${where} does not exist or is not a folder`);
    if (result.code === NOT_WRITABLE) throw new AdapterError(RSYNC_ORIGIN, 'AUTH', `${where} is not writable by the login`);
    if (result.code !== 0) throw rsyncError(result.code, result.stderr, `check of ${where} failed`, 'remote shell');
    return `${where} is a writable folder (${result.stdout.trim().replace(/\s+protocol.*$/, '')})`;
  }

  async put(target: PutTarget, body: Readable, options: { size?: number; signal?: AbortSignal }): Promise<number> {
    const { signal } = options;
    signal?.throwIfAborted();
    const folder = this.path(target.parent);
    const temp = this.path(joinPath(target.parent, `.${target.name}.${randomBytes(8).toString('hex')}.partial`));
    const counter = createByteCounter();
    const channel = await this.connection.exec(`mkdir -p -- ${q(folder)} && umask 077 && cat > ${q(temp)}`);
    const done = finished(channel, false);
    try {
      channel.resume();
      await pipeline(body, counter, channel, { signal });
      const writeResult = await done;
      // No status at all (see `run`) leaves the verdict to the size check below.
      if (writeResult.code !== 0 && writeResult.code !== null) throw rsyncError(writeResult.code, writeResult.stderr, `put of "${target.key}" failed`, 'remote cat');
      signal?.throwIfAborted();
      // The size check guards against a channel that ended early; the rename makes the object appear whole.
      const rename = await run(this.connection, `n=$(wc -c < ${q(temp)}) && [ "$n" -eq ${counter.bytes} ] && mv -f -- ${q(temp)} ${q(this.path(joinPath(target.parent, target.name)))}`);
      if (rename.code !== 0) throw new AdapterError(RSYNC_ORIGIN, 'TRANSIENT', `put of "${target.key}" failed: the server did not store all ${counter.bytes} bytes (${rename.stderr.trim() || `exit ${rename.code ?? rename.signal ?? 'without a status'}`})`);
      return counter.bytes;
    } catch (error) {
      body.destroy();
      // A command that failed first (mkdir refused, disk full) closed the channel under the writes: its exit status
      // says why, so wait briefly for it before the channel is destroyed (destroying first loses the status).
      const remote = signal?.aborted ? undefined : await Promise.race([done, new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 5000).unref())]);
      channel.destroy();
      // A closed channel is the end of input for `cat`, so the temp file may hold a part: always remove it.
      await run(this.connection, `rm -f -- ${q(temp)}`).catch(() => undefined);
      if (signal?.aborted) throw aborted(`put of "${target.key}"`);
      // Under load OpenSSH may close the channel without the exit status (code null); the stderr still says why.
      const remoteFailed = remote !== undefined && remote.code !== 0 && (remote.code !== null || remote.stderr.trim() !== '');
      if (!(error instanceof AdapterError) && remoteFailed) {
        throw rsyncError(remote.code, remote.stderr, `put of "${target.key}" failed`, 'remote shell');
      }
      throw error;
    }
  }

  async stat(key: string): Promise<StorageObjectInfo> {
    const result = await run(this.connection, `${LIST} -- ${q(this.path(key))}`);
    if (result.code !== 0) {
      const error = rsyncError(result.code, result.stderr, `cannot stat "${key}"`);
      throw error.code === 'NOT_FOUND' ? notFound(key) : error;
    }
    const entry = parseListLine(result.stdout.split('\n')[0] ?? '');
    if (!entry?.isFile) throw notFound(key);
    return { key, size: entry.size, modifiedAt: entry.modifiedAt };
  }

  async get(key: string, options: { range?: ByteRange; signal?: AbortSignal }): Promise<Readable> {
    const { size } = await this.stat(key);
    const { start, end } = resolveByteRange(RSYNC_ORIGIN, key, size, options.range);
    const file = q(this.path(key));
    const ranged = start !== undefined && end !== undefined;
    const command = ranged ? `tail -c +${start + 1} -- ${file} | head -c ${end - start + 1}` : `cat -- ${file}`;
    const expected = ranged ? end - start + 1 : size;
    const channel = await this.connection.exec(command);
    const done = finished(channel, false);
    channel.end();
    let bytes = 0;
    const output = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        bytes += chunk.length;
        callback(null, chunk);
      },
      flush(callback) {
        void done.then((result) => {
          if (result.code !== 0 && result.code !== null) callback(rsyncError(result.code, result.stderr, `cannot read "${key}"`, 'remote cat'));
          else if (bytes !== expected) callback(new AdapterError(RSYNC_ORIGIN, 'TRANSIENT', `read of "${key}" returned ${bytes} of ${expected} bytes`));
          else callback();
        });
      },
    });
    channel.pipe(output);
    output.once('close', () => channel.destroy());
    return options.signal ? addAbortSignal(options.signal, output) : output;
  }

  async *list(folderKey: string, prefix: string, signal?: AbortSignal): AsyncIterable<StorageObjectInfo> {
    signal?.throwIfAborted();
    const channel = await this.connection.exec(`( ${LIST} -r -- ${q(`${this.path(folderKey)}/`)} ); printf '\\n${EXIT_PREFIX}%s\\n' "$?"`);
    const done = finished(channel, false);
    channel.end();
    const onAbort = () => channel.destroy();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      let status: number | null = null;
      for await (const line of createInterface({ input: channel, crlfDelay: Infinity })) {
        if (line.startsWith(EXIT_PREFIX)) status = Number(line.slice(EXIT_PREFIX.length));
        const entry = parseListLine(line);
        const object = entry && objectOf(entry, folderKey, prefix);
        if (object) yield object;
      }
      if (signal?.aborted) throw aborted(`listing "${prefix}"`);
      const result = await done;
      const code = status ?? result.code;
      if (code === 0) return;
      const error = rsyncError(code, result.stderr, `cannot list "${prefix}"`);
      if (error.code !== 'NOT_FOUND') throw error;
      // A missing sub-folder is an empty listing, but only when the root itself is there.
      const root = await run(this.connection, `[ -d ${q(this.path(''))} ]`);
      if (folderKey === '' || root.code !== 0) {
        throw new AdapterError(RSYNC_ORIGIN, 'NOT_FOUND', `cannot list "${prefix}": ${this.path('')} does not exist on ${this.connection.where}`);
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      channel.destroy();
    }
  }

  async delete(key: string, parent: string): Promise<void> {
    const file = q(this.path(key));
    // Idempotent; removes the folders the delete emptied, never the root (rmdir -p on a path relative to it).
    const cleanup = parent === '' ? '' : ` && cd -- ${q(this.path(''))} && { rmdir -p -- ${q(parent)} 2>/dev/null || true; }`;
    const result = await run(this.connection, `if [ -f ${file} ] || [ -L ${file} ]; then rm -f -- ${file}${cleanup}; fi`);
    if (result.code !== 0) throw rsyncError(result.code, result.stderr, `cannot delete "${key}"`, 'remote rm');
  }

  async dispose(): Promise<void> {
    await this.connection.close();
  }
}
