// The base of a point-in-time restore: a logical base backup (the Holdfast dump script with its header line) holds
// one or several databases; only the one asked for is loaded, under the new name. The header is read before
// anything is written, so a database the base does not hold is refused first.
import { type Readable, Transform, type TransformCallback } from 'node:stream';
import { AdapterError } from '@holdfast/sdk';
import { ORIGIN, quoteIdentifier } from '../connection.js';
import { requireCompletionLine } from '../completion-check.js';
import { DATA_SECTION_MARKER, parseHeader, type DumpHeader } from '../header.js';
import { splitAt } from '../split-stream.js';

const HEADER_LIMIT = 64 * 1024;
/** Accounts and grants are small; a section larger than this is not one Holdfast wrote. */
const ACCOUNTS_LIMIT = 64 * 1024 * 1024;

/** The base's header and the rest of its script. */
export interface OpenedBase {
  header: DumpHeader;
  rest: Readable;
}

/** Reads the header line of the base's script; CONFIG when it is empty or not a Holdfast MySQL dump. */
export async function openBase(stream: Readable): Promise<OpenedBase> {
  const first = await splitAt(stream, Buffer.from('\n'), HEADER_LIMIT);
  let header: DumpHeader | undefined;
  try {
    header = parseHeader(first.head.toString('utf8'));
  } catch (error) {
    throw new AdapterError(ORIGIN, 'CONFIG', `the base backup's header cannot be read: ${(error as Error).message}`);
  }
  if (!header) throw new AdapterError(ORIGIN, 'CONFIG', 'the base backup is not a Holdfast MySQL/MariaDB dump (no holdfast-mysql header line): it cannot start a point-in-time restore');
  return { header, rest: first.rest };
}

/**
 * The SQL that builds `name` of the base as `into`, for a client started in `into`: the accounts section (when the
 * base has one) is skipped (accounts are server-wide, not part of one database's state), the dump must end with
 * its completion line, and a multi-database script is cut down to the sections of `name`.
 */
export async function baseScript(base: OpenedBase, name: string, into: string): Promise<Readable> {
  let data = base.rest;
  if (base.header.users) {
    const accounts = await splitAt(data, Buffer.from(`\n${DATA_SECTION_MARKER}\n`), ACCOUNTS_LIMIT);
    if (!accounts.isFound) throw new AdapterError(ORIGIN, 'CONFIG', 'the accounts section of the base backup has no end marker (truncated or not a Holdfast backup)');
    data = accounts.rest;
  }
  const checked = requireCompletionLine(data);
  if (base.header.mode === 'single') return checked;
  const section = new DatabaseSection(name, into);
  checked.once('error', (error: Error) => section.destroy(error));
  return checked.pipe(section);
}

/** Lines longer than this are data (INSERT ...), never one of the lines a section is recognised by. */
const CANDIDATE_LIMIT = 4096;
const SECTION_LINE = /^-- Current Database: `((?:[^`]|``)+)`$/;

/**
 * Keeps, from a `--databases` script, the lines before the first database (session settings) and the sections of
 * `name` (mariadb-dump starts each with `-- Current Database: `x``; views come in a second section per database at
 * the end), and drops every other database's sections. In the kept sections, `USE `name`` becomes `USE `into``,
 * and `CREATE DATABASE ... `name` <options>` becomes `ALTER DATABASE `into` <options>` (the restore created `into`
 * itself, so the character set of the original still applies). Long lines are never buffered.
 */
export class DatabaseSection extends Transform {
  /** The database whose section the script is in; undefined before the first. */
  private current: string | undefined;
  /** The start of the line being read, while it may still be a section, USE or CREATE DATABASE line. */
  private head = '';
  /** The line being read is known to be data: its remaining bytes follow `isKeeping`. */
  private isDataLine = false;

  constructor(
    private readonly name: string,
    private readonly into: string,
  ) {
    super();
  }

  private get isKeeping(): boolean {
    return this.current === undefined || this.current === this.name;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    let offset = 0;
    while (offset < chunk.length) {
      const newline = chunk.indexOf(0x0a, offset);
      const end = newline === -1 ? chunk.length : newline + 1;
      const piece = chunk.subarray(offset, end);
      offset = end;
      if (this.isDataLine || (this.head === '' && !this.mayBeSpecial(piece.toString('latin1', 0, Math.min(piece.length, 32))))) {
        // A data line (most of the script): passed or dropped as it is, never turned into text.
        if (this.isKeeping) this.push(piece);
        if (newline === -1) this.isDataLine = true;
      } else {
        // latin1 keeps one character per byte; identifiers are compared in their UTF-8 byte form.
        this.head += piece.toString('latin1');
        if (newline !== -1) {
          this.endLine(this.head);
          this.head = '';
        } else if (this.head.length > CANDIDATE_LIMIT || !this.mayBeSpecial(this.head)) {
          if (this.isKeeping) this.push(Buffer.from(this.head, 'latin1'));
          this.head = '';
          this.isDataLine = true;
        }
      }
      if (newline !== -1) this.isDataLine = false;
    }
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.head) this.endLine(this.head);
    callback();
  }

  private mayBeSpecial(text: string): boolean {
    return ['-- Current Database: ', 'USE ', 'CREATE DATABASE '].some((prefix) => (text.length < prefix.length ? prefix.startsWith(text) : text.startsWith(prefix)));
  }

  private endLine(line: string): void {
    const text = line.replace(/\r?\n$/, '');
    const section = SECTION_LINE.exec(text);
    if (section) this.current = Buffer.from(section[1]!.replaceAll('``', '`'), 'latin1').toString('utf8');
    if (!this.isKeeping) return;
    const original = Buffer.from(quoteIdentifier(this.name), 'utf8').toString('latin1');
    const renamed = Buffer.from(quoteIdentifier(this.into), 'utf8').toString('latin1');
    if (text === `USE ${original};`) {
      this.push(Buffer.from(`USE ${renamed};\n`, 'latin1'));
      return;
    }
    const create = /^CREATE DATABASE (?:\/\*!32312 IF NOT EXISTS\*\/ )?(`(?:[^`]|``)+`)(.*);$/.exec(text);
    if (create && create[1] === original) {
      // Only the options (character set, collation) carry over; without any, there is nothing to alter.
      const options = create[2]!.trim();
      if (options) this.push(Buffer.from(`ALTER DATABASE ${renamed} ${options};\n`, 'latin1'));
      return;
    }
    this.push(Buffer.from(line, 'latin1'));
  }
}
