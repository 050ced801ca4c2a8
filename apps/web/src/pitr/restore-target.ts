// The restore dialog's rules, without React: the window's bounds to the second, the target the API takes, the
// target path check and how the recovery point is judged. Unit-tested in test/pitr-time.test.ts.
import { formatInZone, isoWithOffset, resolveWallTime, type WallTime, zoneAbbreviation } from './zoned-time';

/** The recoverable window as `GET /api/jobs/:id/point-in-time` answers it. */
export interface RecoveryWindow {
  start: string;
  end: string;
}

/**
 * The first and last whole seconds a target may name. The window's ends carry milliseconds; a target of 14:03:27
 * when the window starts at 14:03:27.400 is before it, so the first pickable second is rounded up and the last down.
 * Null when no whole second lies inside (a window shorter than a second: only "latest" can be restored).
 */
export function pickableSeconds(window: RecoveryWindow): { first: number; last: number } | null {
  const first = Math.ceil(Date.parse(window.start) / 1000) * 1000;
  const last = Math.floor(Date.parse(window.end) / 1000) * 1000;
  return first <= last ? { first, last } : null;
}

/** "2026-12-06 14:03:27 – 2026-12-06 15:10:02 CET (Europe/Berlin)": the window as the user reads it. */
export function describeWindow(window: RecoveryWindow, timeZone: string): string {
  const start = Date.parse(window.start);
  const end = Date.parse(window.end);
  const startText = formatInZone(start, timeZone);
  const endText = formatInZone(end, timeZone);
  // One zone name at the end when both ends share it (no DST change inside the window).
  const sameZone = zoneAbbreviation(start, timeZone) === zoneAbbreviation(end, timeZone);
  const shortStart = sameZone ? startText.slice(0, startText.lastIndexOf(' ')) : startText;
  return `${shortStart} – ${endText} (${timeZone})`;
}

/** What the dialog sends as `target`. */
export type RestoreTarget = { type: 'latest' } | { type: 'time'; time: string } | { type: 'position'; position: string } | { type: 'name'; name: string } | { type: 'gtid'; gtid: string };

/** The choice in the dialog before it is checked. */
export type TargetChoice = { type: 'latest' } | { type: 'time'; wall: WallTime } | { type: 'position'; position: string } | { type: 'name'; name: string } | { type: 'gtid'; gtid: string };

/** A checked target, its wording for the confirmation, or the message to show instead. */
export type CheckedTarget = { ok: true; target: RestoreTarget; summary: string; note?: string } | { ok: false; message: string };

const LSN = /^[0-9A-Fa-f]{1,8}\/[0-9A-Fa-f]{1,8}$/;
/** `mysql-bin.000042:1234`: a binary log file and an offset in it, as the API takes it (and the bases record it). */
const BINLOG_POSITION = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,120}\.\d{6,10}:\d{1,15}$/;

/**
 * Why `gtid` is not a GTID the API takes, or null: MariaDB's `domain-server-sequence` (`0-1-352`, what @@last_gtid
 * answers), domain and server id 32-bit, the sequence 64-bit from 1; MySQL's `uuid:n` is not supported (the API
 * answers 400 for all of these, naming target.gtid).
 */
export function gtidProblem(gtid: string): string | null {
  if (/^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}:/i.test(gtid)) {
    return "MySQL's GTIDs (server uuid:number) are not supported: enter a MariaDB GTID such as 0-1-352, or restore to a time or a binary log position";
  }
  const match = /^(\d{1,10})-(\d{1,10})-(\d{1,20})$/.exec(gtid);
  if (!match) return 'Enter one MariaDB GTID as domain-server-sequence, such as 0-1-352 (SELECT @@last_gtid after the commit)';
  if (Number(match[1]) > 0xffffffff || Number(match[2]) > 0xffffffff || BigInt(match[3]!) > 2n ** 64n - 1n || BigInt(match[3]!) === 0n) {
    return 'Out of range: the domain and server id are 32-bit numbers, the sequence a 64-bit number from 1';
  }
  return null;
}

/** The change log a point-in-time job archives, as `GET /api/jobs/:id/point-in-time` names it. */
export type LogKind = 'postgres-wal' | 'mysql-binlog';

/** Anything but the MySQL binary log reads as PostgreSQL's WAL (the only other kind the API knows). */
export function logKindOf(value: string | undefined): LogKind {
  return value === 'mysql-binlog' ? 'mysql-binlog' : 'postgres-wal';
}

/** "binary log" for MySQL/MariaDB, "WAL" for PostgreSQL: how the panel and the dialog name the log. */
export function logWord(kind: LogKind): string {
  return kind === 'mysql-binlog' ? 'binary log' : 'WAL';
}

/**
 * Checks a choice against the window and turns it into the API's target. A time is the wall clock in `timeZone`
 * (the user's), sent as ISO with that zone's offset at that instant, so a date across a DST change gets its own
 * offset. Times outside the window are refused with the window in the message; the server checks again.
 */
export function checkTarget(choice: TargetChoice, window: RecoveryWindow | null, timeZone: string, logKind: LogKind = 'postgres-wal'): CheckedTarget {
  if (choice.type === 'latest') return { ok: true, target: { type: 'latest' }, summary: `as of the newest archived ${logWord(logKind)}` };
  if (logKind === 'mysql-binlog' && choice.type === 'position') {
    const position = choice.position.trim();
    if (!BINLOG_POSITION.test(position)) return { ok: false, message: 'Enter a binary log position as file:offset, such as mysql-bin.000012:4567' };
    return { ok: true, target: { type: 'position', position }, summary: `up to binary log position ${position}` };
  }
  if (logKind === 'mysql-binlog' && choice.type === 'name') return { ok: false, message: 'Named restore points are PostgreSQL only' };
  if (choice.type === 'gtid') {
    if (logKind !== 'mysql-binlog') return { ok: false, message: 'GTID targets are MySQL/MariaDB only' };
    const gtid = choice.gtid.trim();
    const problem = gtidProblem(gtid);
    if (problem) return { ok: false, message: problem };
    return { ok: true, target: { type: 'gtid', gtid }, summary: `up to and including the transaction with GTID ${gtid}` };
  }
  if (choice.type === 'position') {
    const position = choice.position.trim();
    if (!LSN.test(position)) return { ok: false, message: 'Enter a WAL position (LSN) such as 0/3000028' };
    return { ok: true, target: { type: 'position', position: position.toUpperCase() }, summary: `up to WAL position ${position.toUpperCase()}` };
  }
  if (choice.type === 'name') {
    const name = choice.name.trim();
    if (name === '') return { ok: false, message: 'Enter the name given to pg_create_restore_point()' };
    return { ok: true, target: { type: 'name', name }, summary: `at the restore point "${name}"` };
  }
  if (!window) return { ok: false, message: 'There is no recoverable window yet: take a base backup first (run the job)' };
  const resolved = resolveWallTime(choice.wall, timeZone);
  if (resolved.kind === 'invalid') return { ok: false, message: resolved.message };
  if (resolved.kind === 'skipped') return { ok: false, message: `${choice.wall.date} ${choice.wall.time} does not exist in ${timeZone}: the clocks skip it (daylight saving time starts). Pick a time before or after the change` };
  const seconds = pickableSeconds(window);
  const outside = `Pick a time inside the recoverable window: ${describeWindow(window, timeZone)}`;
  if (!seconds || resolved.epochMs < seconds.first || resolved.epochMs > seconds.last) return { ok: false, message: outside };
  const note = resolved.kind === 'ambiguous' ? `${choice.wall.time} happens twice on ${choice.wall.date} in ${timeZone} (the clocks go back): the first one, ${isoWithOffset(resolved.epochMs, timeZone)}, is used` : undefined;
  return { ok: true, target: { type: 'time', time: isoWithOffset(resolved.epochMs, timeZone) }, summary: `as it was at ${formatInZone(resolved.epochMs, timeZone)}`, ...(note ? { note } : {}) };
}

/** Null when `path` can be a restore target path as far as the browser can tell (absolute); else why not. */
export function targetPathProblem(path: string): string | null {
  const trimmed = path.trim();
  if (trimmed === '') return 'Enter the folder to restore into';
  if (!trimmed.startsWith('/')) return 'Use an absolute path on the Holdfast server, e.g. /restore/shop-1403';
  if (trimmed.split('/').includes('..')) return 'Use a path without ".." parts';
  return null;
}

/** Null when empty or a usable TCP port; else why not. */
export function servePortProblem(port: number | string | null | undefined): string | null {
  if (port === '' || port === null || port === undefined) return null;
  const value = Number(port);
  return Number.isInteger(value) && value >= 1024 && value <= 65535 ? null : 'Use a port from 1024 to 65535, or leave it empty to stop the server after the restore';
}

/** How the recovery point reads: green while streaming within the threshold, amber past it, red when not streaming. */
export function recoveryPointTone(seconds: number | null | undefined, state: string | undefined, warnAfterSeconds: number): 'green' | 'yellow' | 'red' {
  if (state !== 'streaming') return 'red';
  if (seconds === null || seconds === undefined || seconds > warnAfterSeconds) return 'yellow';
  return 'green';
}

/** "12 s ago", "4 min 5 s ago", "2 h 3 min ago". */
export function describeAge(seconds: number): string {
  if (seconds < 60) return `${Math.max(0, Math.round(seconds))} s ago`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min ${Math.round(seconds % 60)} s ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h ${minutes % 60} min ago`;
  return `${Math.floor(hours / 24)} days ago`;
}
