import { chmod, mkdir, readdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { KernelLogger } from '@holdfast/kernel';

/** Mode of the data directory: only the server user may list or enter it. */
export const PRIVATE_DIRECTORY_MODE = 0o700;

/** Mode of every file in the data directory (database, its -wal/-shm/-journal siblings, the system key). */
export const PRIVATE_FILE_MODE = 0o600;

const isLooser = (mode: number) => (mode & 0o077) !== 0;
const octal = (mode: number) => `0${(mode & 0o777).toString(8)}`;

/**
 * Makes the data directory and the files in it private before the database opens: the directory 0700, each file
 * 0600. An existing one that was looser is tightened with one warning naming it (the operator learns that it was
 * readable, e.g. by other local users, and since when is their call to check).
 */
export async function securePrivateFiles(dataDir: string, logger: KernelLogger): Promise<void> {
  const directory = resolve(dataDir);
  await mkdir(directory, { recursive: true, mode: PRIVATE_DIRECTORY_MODE });
  const info = await stat(directory);
  // A shared folder (sticky bit, "/", the temp dir) is never chmodded: that would break every other user of it.
  if ((info.mode & 0o1000) !== 0 || directory === '/' || directory === resolve(tmpdir())) {
    logger.warn({ path: directory }, `Data directory ${directory} is a shared folder; set HOLDFAST_DATA_DIR to a private one`);
    return;
  }
  if (isLooser(info.mode)) {
    logger.warn({ path: directory, mode: octal(info.mode) }, `Data directory ${directory} was accessible to other users (mode ${octal(info.mode)}); changed to 0700`);
    await chmod(directory, PRIVATE_DIRECTORY_MODE);
  }
  for (const entry of await readdir(directory, { withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(directory, entry.name);
    const mode = (await stat(path)).mode;
    if (!isLooser(mode)) continue;
    logger.warn({ path, mode: octal(mode) }, `${path} was readable by other users (mode ${octal(mode)}); changed to 0600`);
    await chmod(path, PRIVATE_FILE_MODE);
  }
}

/**
 * Creates the embedded database file empty with mode 0600 before libsql opens it: SQLite gives its -wal, -shm and
 * -journal files the mode of the database file, so they are private from their first byte too.
 */
export async function createPrivateDatabaseFile(file: string): Promise<void> {
  await writeFile(file, '', { flag: 'a', mode: PRIVATE_FILE_MODE });
}

/** Tightens files created meanwhile (siblings libsql made while opening) without a warning: they are new. */
export async function tightenNewFiles(dataDir: string): Promise<void> {
  const directory = resolve(dataDir);
  for (const entry of await readdir(directory, { withFileTypes: true }).catch(() => [])) {
    if (!entry.isFile()) continue;
    const path = join(directory, entry.name);
    const mode = (await stat(path).catch(() => undefined))?.mode;
    if (mode !== undefined && isLooser(mode)) await chmod(path, PRIVATE_FILE_MODE).catch(() => undefined);
  }
}
