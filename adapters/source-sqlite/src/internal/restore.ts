import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { chmod, chown, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AdapterError, type RestoreResult } from '@holdfast/sdk';
import type { SqliteSourceConfig } from '../config.js';
import { assertIntact, ORIGIN } from './sqlite-cli.js';

const SIDE_FILES = ['', '-wal', '-shm', '-journal'];
const SQLITE_MAGIC = 'SQLite format 3\0';

async function exists(file: string): Promise<boolean> {
  return stat(file).then(
    () => true,
    () => false,
  );
}

/** Removes a database file together with its side files. */
async function removeDatabase(file: string): Promise<void> {
  await Promise.all(SIDE_FILES.map((suffix) => rm(`${file}${suffix}`, { force: true })));
}

/** Moves a database file and its side files (a stale -wal next to a new file would corrupt it). */
async function moveDatabase(from: string, to: string): Promise<void> {
  for (const suffix of SIDE_FILES) {
    if (await exists(`${from}${suffix}`)) await rename(`${from}${suffix}`, `${to}${suffix}`);
  }
}

/** Writes the stream to `file` and flushes it to disk. */
async function writeFully(stream: Readable, file: string, signal: AbortSignal): Promise<void> {
  await pipeline(stream, createWriteStream(file, { flags: 'wx', mode: 0o600 }), { signal });
  const handle = await open(file, 'r+');
  try {
    const head = Buffer.alloc(16);
    await handle.read(head, 0, 16, 0);
    if (head.toString('latin1') !== SQLITE_MAGIC) throw new AdapterError(ORIGIN, 'CONFIG', 'the backup is not an SQLite database file');
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/**
 * Restores a backup onto `target`: the stream goes to a temp file beside the target (same file system, so the
 * final rename is atomic), `PRAGMA integrity_check` must answer ok, then the current file moves to `<target>.previous`
 * and the new one is renamed into place and checked again there. The previous file is deleted only after that
 * (unless `keepPreviousFile`); on any failure before, it is moved back. Writers of the target must be stopped.
 */
export async function restoreFile(config: SqliteSourceConfig, stream: Readable, target: string, signal: AbortSignal): Promise<RestoreResult> {
  const temp = path.join(path.dirname(target), `.${path.basename(target)}.holdfast-restore-${randomBytes(4).toString('hex')}`);
  const previous = `${target}.previous`;
  let isPreviousMoved = false;
  try {
    const current = await stat(target).catch(() => undefined);
    await writeFully(stream, temp, signal);
    // The restored file keeps the owner and mode of the one it replaces (the application must still open it).
    if (current) {
      await chmod(temp, current.mode & 0o7777);
      await chown(temp, current.uid, current.gid).catch(() => undefined);
    }
    await assertIntact(config, temp, signal);
    // The check may leave -wal/-shm of the temp file; the new database is complete without them.
    await Promise.all(SIDE_FILES.slice(1).map((suffix) => rm(`${temp}${suffix}`, { force: true })));
    if (await exists(target)) {
      await removeDatabase(previous);
      await moveDatabase(target, previous);
      isPreviousMoved = true;
    }
    await rename(temp, target);
    await assertIntact(config, target, signal);
  } catch (error) {
    await removeDatabase(temp);
    if (isPreviousMoved) {
      await removeDatabase(target);
      await moveDatabase(previous, target);
    }
    if (signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', `restore into ${target} was aborted`);
    if (error instanceof AdapterError) throw error;
    throw new AdapterError(ORIGIN, 'TRANSIENT', `restore into ${target} failed: ${(error as Error).message}`, { cause: error });
  }
  if (isPreviousMoved && !config.keepPreviousFile) await removeDatabase(previous);
  const warnings = isPreviousMoved && config.keepPreviousFile ? [`the replaced database was kept as ${previous}`] : [];
  return { warnings };
}
