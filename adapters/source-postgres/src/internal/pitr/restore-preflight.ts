import { execFile } from 'node:child_process';
import { access, constants, readdir, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import { AdapterError } from '@holdfast/sdk';
import type { PostgresSourceConfig } from '../../config.js';
import { ORIGIN } from '../connection.js';

const run = promisify(execFile);

/** The server programs a restore runs, all of the base backup's major version. */
export interface ServerBinaries {
  postgres: string;
  pgCtl: string;
  /** Optional: lets a time target stop fetching WAL early; absent, every segment is fetched. */
  pgWaldump?: string;
  directory: string;
}

/** `15` of "15.20 (Debian 15.20-0+deb12u1)", `9.6` of "9.6.24": the part a physical copy must match. */
export function majorVersion(serverVersion: string): string {
  const match = /^(\d+)(?:\.(\d+))?/.exec(serverVersion.trim());
  if (!match) throw new AdapterError(ORIGIN, 'CONFIG', `cannot read the major version of the base backup's server version "${serverVersion}"`);
  const major = Number(match[1]);
  return major >= 10 ? String(major) : `${major}.${match[2] ?? '0'}`;
}

/** Refuses a target that is relative, has no parent folder, or holds anything: a restore never overwrites. */
export async function checkTargetPath(targetPath: string): Promise<{ exists: boolean }> {
  if (!path.isAbsolute(targetPath)) {
    throw new AdapterError(ORIGIN, 'CONFIG', `restore target "${targetPath}" is not an absolute path`);
  }
  // The path ends up inside restore_command (a shell command where % is a placeholder) and pg_ctl's shell line.
  if (/["$`\\%\n]/.test(targetPath)) {
    throw new AdapterError(ORIGIN, 'CONFIG', `restore target "${targetPath}" contains a character (" $ \` \\ % or a line break) that PostgreSQL's restore_command cannot carry safely; choose a plainer path`);
  }
  const parent = path.dirname(targetPath);
  const parentStat = await stat(parent).catch(() => null);
  if (!parentStat?.isDirectory()) {
    throw new AdapterError(ORIGIN, 'CONFIG', `the folder above the restore target, "${parent}", does not exist: create it first`);
  }
  const targetStat = await stat(targetPath).catch(() => null);
  if (!targetStat) return { exists: false };
  if (!targetStat.isDirectory()) throw new AdapterError(ORIGIN, 'CONFIG', `restore target "${targetPath}" exists and is not a folder`);
  if ((await readdir(targetPath)).length > 0) {
    throw new AdapterError(ORIGIN, 'CONFIG', `restore target "${targetPath}" is not empty; a point-in-time restore only builds into an empty or absent folder`);
  }
  return { exists: true };
}

/** Major version `postgres --version` reports, or null when the program does not run. */
async function versionOf(postgres: string): Promise<string | null> {
  try {
    const { stdout } = await run(postgres, ['--version']);
    const version = /\(PostgreSQL\)\s+(\S+)/.exec(stdout)?.[1];
    return version ? majorVersion(version) : null;
  } catch {
    return null;
  }
}

async function isExecutable(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}

/**
 * Finds `postgres` and `pg_ctl` of `major`: in `binDirectory`, then Debian's `/usr/lib/postgresql/<major>/bin`, then
 * PATH. A folder counts only when its `postgres --version` is that major version (a physical copy starts only there).
 */
export async function findServerBinaries(config: PostgresSourceConfig, major: string): Promise<ServerBinaries> {
  const candidates = [
    ...(config.binDirectory ? [config.binDirectory] : []),
    `/usr/lib/postgresql/${major}/bin`,
    ...(process.env.PATH ?? '').split(path.delimiter).filter((folder) => folder.length > 0),
  ];
  const tried: string[] = [];
  for (const directory of candidates) {
    const postgres = path.join(directory, 'postgres');
    const pgCtl = path.join(directory, 'pg_ctl');
    if (!(await isExecutable(postgres)) || !(await isExecutable(pgCtl))) {
      if (directory === config.binDirectory || directory.startsWith('/usr/lib/postgresql/')) tried.push(`${directory} (no postgres and pg_ctl)`);
      continue;
    }
    const found = await versionOf(postgres);
    if (found !== major) {
      tried.push(`${directory} (PostgreSQL ${found ?? 'of unknown version'})`);
      continue;
    }
    const pgWaldump = path.join(directory, 'pg_waldump');
    return { postgres, pgCtl, directory, ...((await isExecutable(pgWaldump)) ? { pgWaldump } : {}) };
  }
  throw new AdapterError(
    ORIGIN,
    'CONFIG',
    `the PostgreSQL ${major} server programs (postgres, pg_ctl) were not found; tried ${[...tried, 'PATH'].join(', ')}. ` +
      `Install them (Debian/Ubuntu: apt-get install postgresql-${major}) or set binDirectory to their folder`,
  );
}

/** Refuses a serve port something already listens on (on 127.0.0.1, where the restored server would listen). */
export async function checkPortFree(port: number): Promise<void> {
  const isFree = await new Promise<boolean>((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen({ host: '127.0.0.1', port, exclusive: true }, () => probe.close(() => resolve(true)));
  });
  if (!isFree) throw new AdapterError(ORIGIN, 'CONFIG', `port ${port} on 127.0.0.1 is already in use; choose another port to serve the restored server on`);
}
