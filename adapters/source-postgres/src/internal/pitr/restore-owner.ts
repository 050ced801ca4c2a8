import { execFile } from 'node:child_process';
import { lchown, readdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { AdapterError } from '@holdfast/sdk';
import { ORIGIN } from '../connection.js';

const run = promisify(execFile);

/**
 * The operating-system user the restored server runs as. PostgreSQL refuses to start as root, so a Holdfast running
 * as root hands the data directory to Debian's `postgres` system user (which every PostgreSQL server package
 * creates) and starts the server through `runuser`; any other Holdfast user runs the server itself.
 */
export interface ServerUser {
  /** Set when Holdfast runs as root: the user the files are handed to and the server runs as. */
  name?: string;
  uid: number;
  gid: number;
}

/** The system user that owns the restored files and runs the server. */
export async function serverUser(): Promise<ServerUser> {
  if (process.getuid?.() !== 0) return { uid: process.getuid?.() ?? 0, gid: process.getgid?.() ?? 0 };
  const ids = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]).catch(() => null);
  if (!ids) {
    throw new AdapterError(
      ORIGIN,
      'CONFIG',
      'Holdfast runs as root and PostgreSQL refuses to run as root, but there is no "postgres" system user to run the restored server as: install the PostgreSQL server package (Debian: postgresql-<major>) or run Holdfast as another user',
    );
  }
  return { name: 'postgres', uid: Number(ids[0].stdout.trim()), gid: Number(ids[1].stdout.trim()) };
}

/** The command line that runs `command` as the server user (through runuser when Holdfast is root). */
export function asServerUser(user: ServerUser, command: string, args: string[]): [string, string[]] {
  return user.name ? ['runuser', ['-u', user.name, '--', command, ...args]] : [command, args];
}

/** Hands a tree Holdfast wrote (as root) to the server user; a no-op when Holdfast is that user. */
export async function handOver(user: ServerUser, root: string): Promise<void> {
  if (!user.name) return;
  await lchown(root, user.uid, user.gid);
  for (const entry of await readdir(root, { withFileTypes: true })) {
    const child = path.join(root, entry.name);
    if (entry.isDirectory()) await handOver(user, child);
    else await lchown(child, user.uid, user.gid);
  }
}

/** True when the server user can enter `directory` (every folder above it must let that user through). */
export async function canEnter(user: ServerUser, directory: string): Promise<boolean> {
  if (!user.name) return true;
  const [command, args] = asServerUser(user, 'test', ['-x', directory, '-a', '-d', directory]);
  return run(command, args).then(
    () => true,
    () => false,
  );
}
