import { mkdir } from 'node:fs/promises';
import { resolve, join } from 'node:path';

/** Where the database lives, decided from `DATABASE_URL` and the data directory. */
export type ConnectionTarget =
  | { dialect: 'sqlite'; file: string }
  | { dialect: 'postgresql'; url: string };

/** File name of the embedded database inside the data directory. */
export const EMBEDDED_DATABASE_FILE = 'holdfast.db';

/**
 * Picks the database from the environment: no URL means the embedded libsql file under `dataDir`;
 * `postgres://` or `postgresql://` means PostgreSQL; anything else is refused with a message naming the variable.
 */
export function resolveConnectionTarget(dataDir: string, databaseUrl?: string): ConnectionTarget {
  const url = databaseUrl?.trim();
  if (!url) return { dialect: 'sqlite', file: join(resolve(dataDir), EMBEDDED_DATABASE_FILE) };
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme === 'postgres' || scheme === 'postgresql') return { dialect: 'postgresql', url };
  // Only the scheme is echoed: the rest of the URL may hold a password.
  throw new Error(
    `DATABASE_URL has an unsupported scheme "${scheme ?? '(none)'}": use postgres:// or postgresql://, ` +
      'or leave DATABASE_URL unset for the embedded database in HOLDFAST_DATA_DIR',
  );
}

/** Creates the data directory of the embedded database when it is missing. */
export async function prepareTarget(target: ConnectionTarget, dataDir: string): Promise<void> {
  if (target.dialect === 'sqlite') await mkdir(resolve(dataDir), { recursive: true, mode: 0o700 });
}

/** A description of the target safe for logs: the file path, or the PostgreSQL URL without its password. */
export function describeTarget(target: ConnectionTarget): string {
  if (target.dialect === 'sqlite') return target.file;
  try {
    const parsed = new URL(target.url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgresql (unparseable DATABASE_URL)';
  }
}
