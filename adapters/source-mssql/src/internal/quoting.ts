/**
 * T-SQL quoting. BACKUP and RESTORE take names and paths as literals in the batch (parameters would need
 * sp_executesql), so every name goes through these two functions: a peer broke on names with `-`, `.` and spaces.
 */

/** A delimited identifier: `[name]`, a `]` inside doubled (`a]b` -> `[a]]b]`). */
export function quoteName(name: string): string {
  if (name.length === 0 || name.length > 128) throw new RangeError(`a SQL Server name has 1 to 128 characters, "${name}" has ${name.length}`);
  if (name.includes('\0')) throw new RangeError('a SQL Server name cannot contain a NUL character');
  return `[${name.replaceAll(']', ']]')}]`;
}

/** A Unicode string literal: `N'text'`, a `'` inside doubled. */
export function quoteString(text: string): string {
  if (text.includes('\0')) throw new RangeError('a SQL Server string literal cannot contain a NUL character');
  return `N'${text.replaceAll("'", "''")}'`;
}
