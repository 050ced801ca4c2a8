// The base side of the kit's MySQL/MariaDB point-in-time restore (`mysql-pitr`): what the sidecar says about a
// logical base backup (its binary log coordinates and when it was taken), and the base's dump script, decrypted into
// the work folder as the SQL that builds one database of it under a new name. Holdfast's MySQL dumps start with a
// header line (`-- holdfast-mysql: {"version":1,"mode":"single"|"multi","databases":[...],"users":bool}`); with
// `users` an accounts section comes first, ending with `-- holdfast-mysql-section: data`; a `multi` script is
// mariadb-dump's `--databases` output, one section per database (`-- Current Database: `name``).
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { EXIT, KitError } from './hfenc.mjs';

const HEADER_PREFIX = '-- holdfast-mysql: ';
/** The first line of a physical base (a mariadb-backup stream Holdfast wrapped), which this command does not restore. */
const PHYSICAL_PREFIX = '-- holdfast-mysql-physical: ';
const DATA_SECTION = '-- holdfast-mysql-section: data';
/** The commented coordinates `--master-data=2` writes before the data. */
const COORDINATES = /^-- CHANGE (?:MASTER|REPLICATION SOURCE) TO (?:MASTER|SOURCE)_LOG_FILE='([^']+)', *(?:MASTER|SOURCE)_LOG_POS=(\d+)/;
const SECTION = /^-- Current Database: `((?:[^`]|``)+)`$/;
const COMPLETED = /^-- Dump completed/;
/** Lines that may matter are short; longer ones are data (INSERT ...) and pass through without being held. */
const SHORT_LINE = 4096;
/** The header line lists the databases: longer than any other line looked at, still small. */
const HEADER_LIMIT = 64 * 1024;

/** `mysql-bin.000042:1234` -> { file, offset }; undefined for another form. */
export function parseBinlogPosition(text) {
  const match = /^([^:/\s]+\.\d{6,}):(\d{1,15})$/.exec(String(text ?? '').trim());
  return match ? { file: match[1], offset: Number(match[2]) } : undefined;
}

/** The `pointInTime` of `<base>.meta.json` for a MySQL/MariaDB base, or undefined without a sidecar. */
export function readMysqlSidecar(baseFile) {
  const path = `${baseFile}.meta.json`;
  if (!existsSync(path)) return undefined;
  let meta;
  try {
    meta = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new KitError(EXIT.damaged, `${path} is not readable JSON: ${error.message}`);
  }
  const base = meta.pointInTime;
  if (!base) throw new KitError(EXIT.usage, `${path} describes no base backup (no "pointInTime"): --base must be a base backup of a point-in-time job`);
  if (base.logKind !== 'mysql-binlog') throw new KitError(EXIT.usage, `${path} is a base backup of a ${base.logKind ?? 'PostgreSQL'} job: restore it with the pitr command`);
  const start = parseBinlogPosition(base.startPosition);
  if (!start) throw new KitError(EXIT.damaged, `${path}: the start position "${base.startPosition}" is not <binary log file>:<offset>`);
  return { path, meta, start, consistentAt: base.consistentAt ? new Date(base.consistentAt) : undefined };
}

/** `into` backtick-quoted (names are checked to hold no backtick). */
export const quoted = (name) => `\`${name}\``;

/**
 * Turns the base's script into the SQL that builds `name` in a client started in `into`: the header is checked (a
 * database the base does not hold fails at once), the accounts section is left out (accounts are server-wide), a
 * multi-database script keeps only the sections of `name` with `USE` renamed and its `CREATE DATABASE` turned into
 * an `ALTER DATABASE` of `into` (the character set carries over), and the end must be the dump tool's completion
 * line (a script cut at a statement boundary would otherwise load as a smaller database). The coordinates comment
 * is recorded in `found.coordinates`.
 */
export class BaseScript extends Transform {
  constructor(label, name, into) {
    super();
    Object.assign(this, { label, name, into });
    this.found = { header: undefined, coordinates: undefined };
    this.line = 0;
    /** Start of the current line while it may be one that matters. */
    this.head = '';
    /** The current line is data: its bytes follow `isKeeping()` as they come. */
    this.isData = false;
    this.inAccounts = false;
    this.section = undefined;
    this.lastLine = '';
  }

  isKeeping() {
    return !this.inAccounts && (this.section === undefined || this.section === this.name);
  }

  _transform(chunk, _encoding, callback) {
    try {
      let offset = 0;
      while (offset < chunk.length) {
        const newline = chunk.indexOf(0x0a, offset);
        const end = newline === -1 ? chunk.length : newline + 1;
        const piece = chunk.subarray(offset, end);
        offset = end;
        if (this.isData) {
          if (this.isKeeping()) this.push(piece);
        } else {
          this.head += piece.toString('latin1');
          if (this.line === 0 && this.head.length > HEADER_LIMIT) throw new KitError(EXIT.damaged, `${this.label} is not a Holdfast MySQL/MariaDB dump (no header line)`);
          if (newline !== -1) this.endLine(this.head);
          else if (this.line > 0 && (this.head.length > SHORT_LINE || !/^(-|U|C|$)/.test(this.head))) {
            if (this.isKeeping()) this.push(Buffer.from(this.head, 'latin1'));
            this.head = '';
            this.isData = true;
          }
        }
        if (newline !== -1) {
          if (this.isData) this.lastLine = '';
          this.isData = false;
          this.head = '';
          this.line += 1;
        }
      }
      callback();
    } catch (error) {
      callback(error);
    }
  }

  _flush(callback) {
    try {
      if (this.head) this.endLine(this.head);
    } catch (error) {
      return callback(error);
    }
    if (this.line === 0 && !this.head) return callback(new KitError(EXIT.damaged, `${this.label} is empty`));
    if (!COMPLETED.test(this.lastLine)) {
      return callback(new KitError(EXIT.damaged, `${this.label} is truncated: the script does not end with the dump tool's completion line ("-- Dump completed")`));
    }
    callback();
  }

  /** A whole line that was short enough to look at (latin1: one character per byte), with its newline if it had one. */
  endLine(raw) {
    const text = raw.replace(/\r?\n$/, '');
    if (text.trim() !== '') this.lastLine = text;
    if (this.line === 0) return this.readHeader(text);
    if (text === DATA_SECTION && this.inAccounts) {
      this.inAccounts = false;
      return;
    }
    const coordinates = COORDINATES.exec(text);
    if (coordinates && !this.found.coordinates) this.found.coordinates = { file: coordinates[1], offset: Number(coordinates[2]) };
    const section = SECTION.exec(text);
    if (section && !this.inAccounts) this.section = Buffer.from(section[1].replaceAll('``', '`'), 'latin1').toString('utf8');
    if (!this.isKeeping()) return;
    const original = Buffer.from(quoted(this.name), 'utf8').toString('latin1');
    const renamed = Buffer.from(quoted(this.into), 'utf8').toString('latin1');
    if (this.found.header.mode === 'multi' && text === `USE ${original};`) return this.push(Buffer.from(`USE ${renamed};\n`, 'latin1'));
    const create = /^CREATE DATABASE (?:\/\*!32312 IF NOT EXISTS\*\/ )?(`(?:[^`]|``)+`)(.*);$/.exec(text);
    if (this.found.header.mode === 'multi' && create?.[1] === original) {
      const options = create[2].trim();
      if (options) this.push(Buffer.from(`ALTER DATABASE ${renamed} ${options};\n`, 'latin1'));
      return;
    }
    this.push(Buffer.from(raw, 'latin1'));
  }

  readHeader(text) {
    if (text.startsWith(PHYSICAL_PREFIX)) {
      throw new KitError(
        EXIT.usage,
        `${this.label} is a physical base backup (mariadb-backup): this command restores from logical bases only. Restore it through Holdfast, or take the point in time from a logical base of the job`,
      );
    }
    if (!text.startsWith(HEADER_PREFIX)) {
      throw new KitError(EXIT.damaged, `${this.label} is not a Holdfast MySQL/MariaDB dump (its first line is no "-- holdfast-mysql:" header): it cannot start a point-in-time restore`);
    }
    let header;
    try {
      header = JSON.parse(Buffer.from(text.slice(HEADER_PREFIX.length), 'latin1').toString('utf8'));
    } catch (error) {
      throw new KitError(EXIT.damaged, `${this.label}: its header line is not readable: ${error.message}`);
    }
    if (header.version !== 1 || !Array.isArray(header.databases)) throw new KitError(EXIT.damaged, `${this.label}: unsupported header ${text.slice(0, 200)}`);
    if (!header.databases.includes(this.name)) {
      throw new KitError(EXIT.usage, `the base backup holds no database "${this.name}" (it holds ${header.databases.map((name) => `"${name}"`).join(', ')}): choose one of them with --database`);
    }
    this.found.header = header;
    this.inAccounts = header.users === true;
  }
}

/** Decodes the base (via `decode(sink)`) into `file` as the SQL for `into`; answers the header and coordinates. */
export async function writeBaseScript(decode, file, { label, name, into }) {
  const script = new BaseScript(label, name, into);
  await decode((source) => pipeline(source, script, createWriteStream(file, { mode: 0o600, flags: 'wx' })));
  if (!script.found.coordinates) throw new KitError(EXIT.damaged, `${label} carries no binary log coordinates (no CHANGE MASTER comment): it is not a point-in-time base backup`);
  return script.found;
}
