import { lineText, type RecoveryTarget } from '@holdfast/kernel';
import { z } from 'zod';
import { BINLOG_POSITION, gtidProblem, WAL_POSITION, walPositionValue } from './log-positions.js';
import { mysqlDatabaseNameProblem } from './mysql-database-name.js';

// The body of `POST /api/jobs/:id/point-in-time/restore` (docs/pitr.md, "Restoring through Holdfast (API)"). Every
// field is checked before a run is queued: a bad body answers 400 naming the field and queues nothing. The body is
// one schema for both kinds of job; which fields a job takes (targetPath for PostgreSQL, database and
// targetDatabase for MySQL/MariaDB) depends on its source and is checked by the preflight once the job is resolved.

/** An ISO 8601 instant with its offset (`Z` or `+02:00`): a time without one would be read in some server's zone. */
const isoInstant = z
  .string()
  .max(64)
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/i, 'must be an ISO 8601 time with an offset, e.g. 2026-12-06T04:05:06.789Z')
  .refine((value) => Number.isFinite(Date.parse(value)), 'is not a valid date');

/** A log position of either kind: `0/3000028` (PostgreSQL) or `mysql-bin.000042:1234` (MySQL/MariaDB). */
export const logPosition = z
  .string()
  .max(160)
  .refine((value) => WAL_POSITION.test(value) || BINLOG_POSITION.test(value), 'must be a log position like 0/3000028 (PostgreSQL) or mysql-bin.000042:1234 (MySQL/MariaDB binary log file:offset)');

/** A restore point name (`pg_create_restore_point`, at most 63 bytes like every PostgreSQL name). */
const restorePointName = lineText({ min: 1, max: 63 }).refine((name) => Buffer.byteLength(name) <= 63, 'must be at most 63 bytes');

/** A MariaDB GTID (MySQL/MariaDB jobs only; the preflight refuses it for PostgreSQL jobs). */
const mariadbGtid = z
  .string()
  .max(64)
  .superRefine((gtid, ctx) => {
    const problem = gtidProblem(gtid);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

const targetSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('latest') }),
  z.strictObject({ type: z.literal('time'), time: isoInstant }),
  z.strictObject({ type: z.literal('position'), position: logPosition }),
  z.strictObject({ type: z.literal('name'), name: restorePointName }),
  z.strictObject({ type: z.literal('gtid'), gtid: mariadbGtid }),
]);

/** A MySQL database name the restore can quote and rewrite safely (see mysql-database-name.ts). */
const mysqlDatabaseName = z.string().superRefine((name, ctx) => {
  const problem = mysqlDatabaseNameProblem(name);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});

/** The request body; unknown fields are refused. */
export const pointRestoreBodySchema = z.strictObject({
  target: targetSchema.describe(
    'Where replay stops: latest, a time (ISO 8601 with offset), a log position (PostgreSQL 0/3000028; MySQL/MariaDB binary log file:offset, mysql-bin.000042:1234), a restore point name (PostgreSQL only) or a GTID (MySQL/MariaDB only: MariaDB domain-server-sequence, 0-1-352; every transaction up to and including it)',
  ),
  targetPath: lineText({ min: 2, max: 4096 })
    .regex(/^\//, 'must be an absolute path')
    .refine((path) => !path.split('/').includes('..'), 'must not contain ".." segments')
    .optional()
    .describe('PostgreSQL jobs (required there, refused for MySQL/MariaDB): absolute folder on the Holdfast host where the data directory is built: absent or empty, inside HOLDFAST_LOCAL_ROOTS'),
  servePort: z.number().int().min(1024).max(65535).optional().describe('PostgreSQL jobs only: leave the restored server running on 127.0.0.1 at this port; absent: replay, check, stop'),
  database: mysqlDatabaseName
    .optional()
    .describe('MySQL/MariaDB jobs (required there, refused for PostgreSQL): the database of the base backup to restore'),
  targetDatabase: mysqlDatabaseName
    .optional()
    .describe("MySQL/MariaDB jobs (required there, refused for PostgreSQL): the NEW database the copy is built in, on the job's own server or the one targetSourceId names; it must not exist there (1 to 64 letters, digits, _, $ or -; not a system schema)"),
  targetSourceId: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe(
      "MySQL/MariaDB jobs only: build targetDatabase on the server of this stored source configuration (same adapter as the job's source, not excluded from restores, not over SSH) instead of the job's own; absent: the job's own server",
    ),
  destinationId: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe("Read the base backup and the log from this destination of the job only; default: the job's destinations by priority, the next one when one fails"),
});

export type PointRestoreBody = z.output<typeof pointRestoreBodySchema>;

/** The request stored on the execution (type `Restore`, with the job id). */
export interface PointRestoreRequest {
  pointInTime: true;
  jobId: string;
  target: PointRestoreBody['target'];
  /** PostgreSQL: the folder the data directory is built in. */
  targetPath?: string;
  servePort?: number;
  /** MySQL/MariaDB: the database of the base restored (`name`) into a new database (`into`). */
  database?: { name: string; into: string };
  /** MySQL/MariaDB: the other server `database.into` is built on (absent: the job's own); `name` as logs show it. */
  targetSource?: { id: string; name: string };
  destinationId?: string;
  /** The base backup the route chose, so the run restores what the refusals were checked against. */
  baseExecutionId: string;
}

/** True for the request of a point-in-time restore. */
export function isPointRestoreRequest(request: unknown): request is PointRestoreRequest {
  return typeof request === 'object' && request !== null && (request as { pointInTime?: unknown }).pointInTime === true;
}

/** The contract's target from the stored one (dates travel as ISO strings). */
export function recoveryTargetOf(target: PointRestoreBody['target']): RecoveryTarget {
  if (target.type === 'time') return { type: 'time', time: new Date(target.time) };
  // The contract carries a GTID as a position marked as one (kernel RecoveryTarget).
  if (target.type === 'gtid') return { type: 'position', position: target.gtid, isGtid: true };
  return target;
}

/** A PostgreSQL log position as one number, to compare positions (log-positions.ts has both kinds). */
export const positionValue = walPositionValue;
