/**
 * The first line of every MySQL backup: an SQL comment, so the file stays a plain script that `mariadb < file`
 * restores without Holdfast, while Holdfast's restore learns what it holds. Format, version 1:
 *
 *   -- holdfast-mysql: {"version":1,"mode":"single"|"multi","databases":["name", ...],"users":true|false}
 *
 * `single`: one database dumped without CREATE DATABASE/USE, restored into any target database.
 * `multi`: `--databases` output (one consistent snapshot) with CREATE DATABASE and USE per database.
 * With `users`, the accounts section (`mariadb-dump --system=users --insert-ignore`) comes first and ends with the
 * line {@link DATA_SECTION_MARKER}; the databases follow.
 */
export const HEADER_PREFIX = '-- holdfast-mysql: ';

/** Line between the accounts section and the data section. */
export const DATA_SECTION_MARKER = '-- holdfast-mysql-section: data';

/** What a backup holds. */
export interface DumpHeader {
  version: 1;
  mode: 'single' | 'multi';
  databases: string[];
  users: boolean;
}

/** Encodes the header line (with its newline). */
export function encodeHeader(header: DumpHeader): Buffer {
  return Buffer.from(`${HEADER_PREFIX}${JSON.stringify(header)}\n`, 'utf8');
}

/** Parses a first line; undefined when it is not a Holdfast header (a plain dump from elsewhere). */
export function parseHeader(line: string): DumpHeader | undefined {
  if (!line.startsWith(HEADER_PREFIX)) return undefined;
  const parsed = JSON.parse(line.slice(HEADER_PREFIX.length)) as DumpHeader;
  if (parsed.version !== 1) throw new Error(`unsupported holdfast-mysql header version ${String(parsed.version)}`);
  return parsed;
}
