/**
 * Reads the header of a `pg_dump --format=custom` archive (PostgreSQL's pg_backup_archiver.c, ReadHead): magic
 * "PGDMP", archive version, int and offset sizes, format, compression, creation time, then the strings database
 * name, server version and pg_dump version. Only the header is read; nothing past it is needed to know where the
 * dump comes from.
 */
export interface DumpHeader {
  /** Archive format version, e.g. `1.14.0` (pg_dump 15). */
  archiveVersion: string;
  database: string | undefined;
  /** The source server's version as pg_dump recorded it, e.g. `15.20 (Debian 15.20-0+deb12u1)`. */
  serverVersion: string | undefined;
  pgDumpVersion: string | undefined;
}

/** The magic at the start of every custom-format archive. */
export const PGDMP_MAGIC = Buffer.from('PGDMP', 'latin1');

/** Thrown by the parser when the buffer ends inside the header (the caller reads more and retries). */
class NeedMoreBytes extends Error {}

/**
 * Parses the header from the first bytes of a dump. Answers undefined when `head` is too short to hold the whole
 * header yet; throws when it is not a custom-format archive.
 */
export function parseDumpHeader(head: Buffer): DumpHeader | undefined {
  if (head.length < PGDMP_MAGIC.length) return undefined;
  if (!head.subarray(0, PGDMP_MAGIC.length).equals(PGDMP_MAGIC)) throw new Error('not a pg_dump custom-format archive (no PGDMP magic)');
  let at = PGDMP_MAGIC.length;
  const byte = (): number => {
    if (at >= head.length) throw new NeedMoreBytes();
    return head[at++]!;
  };
  try {
    const [major, minor, revision] = [byte(), byte(), byte()];
    const version = (major << 16) | (minor << 8) | revision;
    const atLeast = (a: number, b: number) => version >= ((a << 16) | (b << 8));
    const intSize = byte();
    byte(); // offset size
    byte(); // format
    // ReadInt: a sign byte, then intSize bytes, least significant first.
    const readInt = (): number => {
      const negative = byte() !== 0;
      let value = 0;
      for (let i = 0; i < intSize; i++) value += byte() * 2 ** (8 * i);
      return negative ? -value : value;
    };
    const readString = (): string | undefined => {
      const length = readInt();
      if (length < 0) return undefined;
      if (at + length > head.length) throw new NeedMoreBytes();
      const text = head.subarray(at, at + length).toString('utf8');
      at += length;
      return text;
    };
    // 1.15 (pg_dump 16) stores the compression algorithm as one byte; older versions store a level as an int.
    if (atLeast(1, 15)) byte();
    else if (atLeast(1, 2)) readInt();
    let database: string | undefined;
    if (atLeast(1, 4)) {
      for (let i = 0; i < 7; i++) readInt(); // creation time: sec, min, hour, mday, mon, year, isdst
      database = readString();
    }
    const serverVersion = atLeast(1, 10) ? readString() : undefined;
    const pgDumpVersion = atLeast(1, 10) ? readString() : undefined;
    return { archiveVersion: `${major}.${minor}.${revision}`, database, serverVersion, pgDumpVersion };
  } catch (error) {
    if (error instanceof NeedMoreBytes) return undefined;
    throw error;
  }
}

/**
 * The major version of a PostgreSQL version string as a comparable number: `15.20 (Debian ...)` -> 15,
 * `9.6.24` -> 9.6 (before 10 the major had two parts). Undefined when the text holds no version.
 */
export function majorVersion(version: string | undefined): number | undefined {
  const match = /^\s*(\d+)(?:\.(\d+))?/.exec(version ?? '');
  if (!match) return undefined;
  const first = Number(match[1]);
  return first >= 10 ? first : Number(`${first}.${match[2] ?? '0'}`);
}
