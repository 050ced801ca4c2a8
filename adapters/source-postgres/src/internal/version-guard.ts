import { AdapterError } from '@holdfast/sdk';
import { ORIGIN } from './connection.js';
import { majorVersion } from './dump-header.js';

/** The target server's version, asked at most once per restore. */
export type TargetVersion = () => Promise<string>;

/** Memoises the version query of a restore. */
export function onceVersion(query: () => Promise<string>): TargetVersion {
  let answer: Promise<string> | undefined;
  return () => (answer ??= query());
}

/**
 * Refuses a backup whose source server is of a newer major than the target server: a dump of PostgreSQL 17 may
 * use syntax and catalogue features a PostgreSQL 15 server does not have, and pg_restore would fail halfway,
 * leaving a half-restored database. Runs before anything is written. A source version that cannot be read (a dump
 * of pg_dump before 8.4) is let through: pg_restore itself still checks what it can.
 */
export async function refuseNewerSource(sourceVersion: string | undefined, targetVersion: TargetVersion, what: string): Promise<void> {
  const source = majorVersion(sourceVersion);
  if (source === undefined) return;
  const targetText = await targetVersion();
  const target = majorVersion(targetText);
  if (target === undefined || source <= target) return;
  const sourceText = sourceVersion!.trim().split(' ')[0];
  throw new AdapterError(
    ORIGIN,
    'CONFIG',
    `${what} comes from PostgreSQL ${sourceText} (major ${source}), newer than the target server's PostgreSQL ${targetText} (major ${target}): ` +
      `a dump cannot be restored onto an older major version; restore onto a PostgreSQL ${source} or later server. Nothing was written.`,
  );
}
