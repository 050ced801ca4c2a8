// Database names of a MySQL/MariaDB point-in-time restore (`database`, `targetDatabase`). The restore replays the
// binary log with mariadb-binlog's `--rewrite-db='<database>-><targetDatabase>'` and creates the new database with a
// backtick-quoted name, so besides MySQL's own rules (at most 64 characters, no NUL, no trailing space) the names
// that could break out of either are refused: a backtick, a slash or backslash (database names are folder names on
// the server), the `->` of the rewrite rule, quotes, control characters. Past those, the MySQL source's restore
// takes letters, digits, `_`, `$` and `-` only (names every client tool takes unquoted in its options); the same
// rule here refuses such a request before it is queued instead of failing the run.

/** The server's own schemas: never a restore's new database, and never listed by the source's listDatabases. */
const SYSTEM_SCHEMAS = ['information_schema', 'performance_schema', 'mysql', 'sys'];

/** A schema of the MySQL source's own staged restores (`…__holdfast_staging_1a2b3c4d`): not a name to restore into. */
const RESTORE_WORK_SCHEMA = /__holdfast_(staging|old)_[0-9a-f]{8}$/i;

/** Letters, digits, `_`, `$`, `-`. */
const TOOL_SAFE_NAME = /^[\p{L}\p{N}_$-]+$/u;

/** Why `name` cannot be the name of a database to restore from or into, or undefined when it can. */
export function mysqlDatabaseNameProblem(name: string): string | undefined {
  const characters = [...name];
  if (characters.length === 0) return 'must not be empty';
  if (characters.length > 64) return `is ${characters.length} characters long; MySQL database names have at most 64`;
  if (name.endsWith(' ')) return 'ends with a space, which MySQL does not allow in a database name';
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'contains a control character (or NUL)';
  if (/[`/\\'"]/.test(name)) return 'contains a backtick, quote, slash or backslash, which Holdfast refuses in the names of a point-in-time restore (they would break the quoting of the replay)';
  if (name.includes('->')) return 'contains "->", the separator of the replay\'s --rewrite-db rule';
  if (!TOOL_SAFE_NAME.test(name)) return 'may hold letters, digits, "_", "$" and "-" only in a point-in-time restore (names the replay tools take unquoted)';
  return undefined;
}

/** Why `name` cannot be the NEW database of a restore (a system or work schema), or undefined. */
export function reservedTargetProblem(name: string): string | undefined {
  if (SYSTEM_SCHEMAS.includes(name.toLowerCase())) return `"${name}" is a system schema of the server`;
  if (RESTORE_WORK_SCHEMA.test(name)) return `"${name}" is named like the work schema of a Holdfast restore`;
  return undefined;
}
