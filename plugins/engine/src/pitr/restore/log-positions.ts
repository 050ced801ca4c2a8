import type { ChangeLogKind } from '@holdfast/kernel';
import { binlogNaming } from '../log-naming.js';

// Log positions as the two change-log kinds write them. A restore request names one as a target; which form is
// right depends on the job's source, known only once the job is resolved, so the body accepts both and the
// preflight refuses the form of the other kind (pitr/restore/point-restore-preflight.ts).

/** PostgreSQL: an LSN as the server writes it (`0/3000028`: two hex numbers of at most 8 digits). */
export const WAL_POSITION = /^[0-9A-F]{1,8}\/[0-9A-F]{1,8}$/i;

/**
 * MySQL/MariaDB: `<binary log file>:<byte offset>` (`mysql-bin.000042:1234`), the form the source's base backups
 * record. The file name is held to the characters a stored segment key allows; its number has at least six digits.
 */
export const BINLOG_POSITION = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,120}\.\d{6,10}:\d{1,15}$/;

/** What a position of each kind looks like, for refusals. */
export const POSITION_EXAMPLE: Record<ChangeLogKind, string> = {
  'postgres-wal': 'a PostgreSQL log position like 0/3000028',
  'mysql-binlog': 'a binary log position like mysql-bin.000042:1234 (file:offset)',
};

/** True when `position` is written the way `kind` writes positions. */
export function isPositionOf(kind: ChangeLogKind, position: string): boolean {
  return (kind === 'mysql-binlog' ? BINLOG_POSITION : WAL_POSITION).test(position);
}

/** A PostgreSQL log position as one number, to compare positions. */
export function walPositionValue(position: string): bigint {
  const [high, low] = position.split('/');
  return (BigInt(`0x${high}`) << 32n) | BigInt(`0x${low}`);
}

/**
 * A binary log position as one number: the file's sequence number above the offset. Offsets fit in 32 bits in
 * practice (max_binlog_size is at most 1 GiB), 48 are left for them so the order holds whatever the server allows.
 */
export function binlogPositionValue(position: string): bigint {
  const colon = position.lastIndexOf(':');
  const sequence = binlogNaming.sequence(position.slice(0, colon));
  if (colon < 0 || sequence === null) throw new Error(`"${position}" is not a binary log position (file:offset)`);
  return (BigInt(sequence) << 48n) | BigInt(position.slice(colon + 1));
}

/** A position of `kind` as one number: positions of one server (and one timeline) compare as these do. */
export function positionValueOf(kind: ChangeLogKind, position: string): bigint {
  return kind === 'mysql-binlog' ? binlogPositionValue(position) : walPositionValue(position);
}

/**
 * A MariaDB GTID as a restore target: `domain-server-sequence` (`0-1-352`), the form `@@last_gtid` answers. MySQL's
 * `uuid:n` is not taken: the MySQL source cannot locate it (there is no MySQL server to test it on).
 */
export const MARIADB_GTID = /^\d{1,10}-\d{1,10}-\d{1,20}$/;

/** Why `gtid` is not a GTID a MySQL/MariaDB restore takes, or undefined. */
export function gtidProblem(gtid: string): string | undefined {
  if (/^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}:/i.test(gtid)) {
    return "is MySQL's form (server uuid:transaction number), which is not supported; give a MariaDB GTID (domain-server-sequence, e.g. 0-1-352) or restore to a time or a binary log position";
  }
  if (!MARIADB_GTID.test(gtid)) return 'must be one MariaDB GTID, domain-server-sequence like 0-1-352 (@@last_gtid after the commit)';
  const [domain, server, sequence] = gtid.split('-');
  if (Number(domain) > 0xffff_ffff || Number(server) > 0xffff_ffff || BigInt(sequence!) > (1n << 64n) - 1n || BigInt(sequence!) === 0n) {
    return 'is out of range: domain and server id are 32-bit numbers, the sequence a 64-bit number from 1';
  }
  return undefined;
}
