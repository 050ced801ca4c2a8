// The MySQL/MariaDB half of the restore dialog, without React: the database names (checked as the API checks them,
// so a bad name is refused before anything is sent), the new name suggested, the servers the new database can be
// built on, and which field a refusal of the API is about, so the dialog can show it under that field. Unit-tested in test/pitr-mysql-request.test.ts.
import type { RestoreTarget } from './restore-target';

/** Letters, digits, `_`, `$`, `-`: the names the replay tools take unquoted (the API refuses anything else). */
const TOOL_SAFE_NAME = /^[\p{L}\p{N}_$-]+$/u;

/** The server's own schemas: never a restore's new database (the API answers 400). */
const SYSTEM_SCHEMAS = ['information_schema', 'performance_schema', 'mysql', 'sys'];

/** Why `name` cannot name a database of a point-in-time restore, or null when it can (as far as the browser can tell). */
export function mysqlDatabaseNameProblem(name: string): string | null {
  const length = [...name].length;
  if (length === 0) return 'Enter a database name';
  if (length > 64) return `${length} characters: MySQL database names have at most 64`;
  if (!TOOL_SAFE_NAME.test(name)) return 'Use letters, digits, "_", "$" and "-" only';
  return null;
}

/** As {@link mysqlDatabaseNameProblem}, plus what the new database may not be: a system schema, the source database. */
export function targetDatabaseProblem(name: string, database: string): string | null {
  const problem = mysqlDatabaseNameProblem(name);
  if (problem) return problem;
  if (SYSTEM_SCHEMAS.includes(name.toLowerCase())) return `"${name}" is a system schema of the server`;
  if (name.toLowerCase() === database.trim().toLowerCase()) return 'Choose a new name: the restore builds a new database and never replaces the one it restores';
  return null;
}

const pad = (value: number) => String(value).padStart(2, '0');

/**
 * `<database>_restored_<yyyymmdd_hhmmss>` in the user's local time, cut so the whole name stays within 64 characters
 * (the suffix is kept: it is what makes the name new).
 */
export function suggestTargetDatabase(database: string, now: Date): string {
  const stamp = `${now.getFullYear()}${pad(now.getMonth() + 1)}${pad(now.getDate())}_${pad(now.getHours())}${pad(now.getMinutes())}${pad(now.getSeconds())}`;
  const suffix = `_restored_${stamp}`;
  const base = [...(database.trim() || 'database')].slice(0, 64 - suffix.length).join('');
  return `${base}${suffix}`;
}

/** The body of a MySQL/MariaDB job's `POST /api/jobs/:id/point-in-time/restore` (no targetPath/servePort: refused there). */
export interface MysqlRestoreBody {
  target: RestoreTarget;
  database: string;
  targetDatabase: string;
  /** Another source configuration of the same adapter whose server the new database is built on; absent: the job's own. */
  targetSourceId?: string;
  destinationId?: string;
}

/** A source configuration as the sources list answers it (the fields the server choice needs). */
export interface SourceSummary {
  id: string;
  name: string;
  adapterId: string;
  excludeFromRestore?: boolean;
}

/** The "Server" value of the job's own server (no targetSourceId sent); not a configuration id (those are UUIDs). */
export const JOB_SERVER = 'job-source';

/** One choice of the dialog's "Server": `value` is {@link JOB_SERVER} or another source configuration's id. */
export interface ServerChoice {
  value: string;
  label: string;
}

/**
 * The servers a restore of the job whose source is `jobSourceId` can build its new database on: the job's own
 * first (the default), then every other source of the same adapter not excluded from restores (the API refuses
 * another adapter, 422, and an excluded source, 409). Configurations the API refuses for other reasons (reached over
 * SSH) stay offered: the API's refusal names them under the field.
 */
export function serverChoicesOf(sources: readonly SourceSummary[], jobSourceId: string | undefined): ServerChoice[] {
  const own = sources.find((source) => source.id === jobSourceId);
  const ownLabel = own ? `${own.name} (the job's own server)` : "The job's own server";
  const others = own ? sources.filter((source) => source.id !== own.id && source.adapterId === own.adapterId && !source.excludeFromRestore) : [];
  return [{ value: JOB_SERVER, label: ownLabel }, ...others.map((source) => ({ value: source.id, label: source.name }))];
}

/** The body to send, or the first problem of each field when the names would be refused. */
export function buildMysqlRestoreBody(
  target: RestoreTarget,
  database: string,
  targetDatabase: string,
  targetSourceId: string = JOB_SERVER,
): { ok: true; body: MysqlRestoreBody } | { ok: false; problems: { database?: string; targetDatabase?: string } } {
  const name = database.trim();
  const into = targetDatabase.trim();
  const databaseProblem = mysqlDatabaseNameProblem(name);
  const targetProblem = targetDatabaseProblem(into, name);
  if (databaseProblem || targetProblem) return { ok: false, problems: { ...(databaseProblem ? { database: databaseProblem } : {}), ...(targetProblem ? { targetDatabase: targetProblem } : {}) } };
  return { ok: true, body: { target, database: name, targetDatabase: into, ...(targetSourceId !== JOB_SERVER && targetSourceId ? { targetSourceId } : {}) } };
}

/** A field of the dialog a refusal can be shown under; `general` when the message names none. */
export type RefusedField = 'database' | 'targetDatabase' | 'targetSourceId' | 'target' | 'general';

/**
 * Which field the API's refusal is about, read from its message: a 400 names `body.<field>` ("Invalid request:
 * body.targetDatabase: …"), a 409 starts with `targetDatabase "…" already exists`, a 422 with `database "…" is not in
 * base backup …` or names the window for a time outside it; a refusal of the server chosen (404, 409, 422) starts
 * with `targetSourceId`.
 */
export function refusedFieldOf(status: number, message: string): RefusedField {
  const named = /body\.(targetDatabase|targetSourceId|database|target)\b/.exec(message)?.[1];
  if (named) return named as RefusedField;
  if (/^targetSourceId\b/.test(message)) return 'targetSourceId';
  if (/^targetDatabase\b/.test(message)) return 'targetDatabase';
  if (/^database\b/.test(message)) return 'database';
  if (status === 422 && /window|position|base backup/i.test(message) && !/public-key/.test(message)) return 'target';
  return 'general';
}
