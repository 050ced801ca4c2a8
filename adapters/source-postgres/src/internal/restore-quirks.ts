import { majorVersion } from './dump-header.js';

/**
 * pg_restore 17 opens every session with `SET transaction_timeout = 0`, a setting servers before 17 do not have: the
 * statement fails, pg_restore goes on, restores everything else and exits 1 with "errors ignored on restore: 1".
 * The container image ships only Debian's newest client (17), so a restore into PostgreSQL 15 would always "fail".
 *
 * Returns the line to log instead of failing when that is the only error: the target server is older than 17
 * and every error pg_restore reported is that statement, counted against pg_restore's own total. Anything else (a
 * second error, a truncated stderr where the count does not add up) returns null and the restore fails as before.
 */
export function harmlessTransactionTimeoutError(stderr: string, targetVersion: string): string | null {
  const target = majorVersion(targetVersion);
  if (target === undefined || target >= 17) return null;
  const total = /errors ignored on restore: (\d+)/.exec(stderr);
  if (!total) return null;
  const errors = stderr.split('\n').filter((line) => /\bERROR:/.test(line));
  const timeoutErrors = errors.filter((line) => line.includes('unrecognized configuration parameter "transaction_timeout"'));
  if (errors.length === 0 || timeoutErrors.length !== errors.length || Number(total[1]) !== errors.length) return null;
  return `pg_restore (17 or newer) set transaction_timeout, which PostgreSQL ${targetVersion.split(' ')[0]} does not have; that statement was skipped and everything else restored`;
}
