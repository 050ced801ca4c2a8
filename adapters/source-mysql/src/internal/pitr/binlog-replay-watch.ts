// Reads the SQL text mariadb-binlog writes, line by line, on its way into the client: it learns which transactions
// were replayed (for `recoveredTo`), and it stops a statement-based event that names another database explicitly
// before the client ever receives it: --rewrite-db changes only a statement's default database, so
// `UPDATE shop.orders ...` replayed for `shop_restored` would write into the original `shop` (or any other database
// it names), which a restore must never touch.
import { Transform, type TransformCallback } from 'node:stream';
import { AdapterError } from '@holdfast/sdk';
import { ORIGIN } from '../connection.js';

/** `#261206 22:13:05 server id 1  end_log_pos 456 CRC32 0x1a2b3c4d \tGTID 0-1-7 trans` (time in the tool's TZ, UTC here). */
const EVENT_HEADER = /^#(\d{2})(\d{2})(\d{2}) +(\d{1,2}):(\d{2}):(\d{2}) +server id \d+ +end_log_pos \d+(.*)$/;

// The lines mariadb-binlog writes before each transaction to give it its original GTID, for example
// `/*M!100001 SET @@session.gtid_seq_no=7*/` followed by its delimiter; likewise for the domain and the server id.
const GTID_SETTING = /^\/\*M?!\d+ SET @@session\.(?:gtid_seq_no|gtid_domain_id|server_id)=\d+\*\/\/\*!\*\/;\s*$/;

/** What the replay learned so far, shared by the watches of every file. */
export interface ReplayProgress {
  /** Start time (whole second) of the newest transaction whose end went to the client. */
  lastCommitted?: Date;
  transactions: number;
  /** Account statements left out (see {@link ACCOUNT_STATEMENT}). */
  accountStatements?: number;
}

/**
 * Statements about accounts and roles. They are server-wide, not part of a database's state, but the server logs
 * them with the session's default database, so one run while the restored database was the default passes the
 * filter; replayed, it would change the live server's accounts now (`DROP USER` of an account recreated since).
 * They are left out, with their delimiter.
 */
const ACCOUNT_STATEMENT = /^\s*(?:(?:CREATE|DROP|ALTER|RENAME)\s+(?:USER|ROLE)|GRANT|REVOKE|SET\s+(?:PASSWORD|DEFAULT\s+ROLE))\b/i;

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Statement text that names one of `databases` itself: a qualified name (`shop.orders`, `` `shop`.orders ``) or a
 * database statement (`DROP DATABASE shop`, `CREATE SCHEMA IF NOT EXISTS `shop``; the server logs those with the
 * named database as the event's database, so the filter lets them through once it is rewritten). Case-insensitive
 * and blind to string literals and aliases: it may refuse a harmless statement, never pass a harmful one it sees.
 */
export function databaseNamesPattern(databases: readonly string[]): RegExp | undefined {
  if (databases.length === 0) return undefined;
  const names = databases.flatMap((database) => [escapeRegExp(database), escapeRegExp(`\`${database.replaceAll('`', '``')}\``)]);
  const name = `(?:${names.join('|')})`;
  const qualified = `(?:^|[^A-Za-z0-9_$\`])${name}\\s*\\.`;
  const databaseStatement = `\\b(?:DATABASE|SCHEMA)\\s+(?:IF\\s+(?:NOT\\s+)?EXISTS\\s+)?${name}(?![A-Za-z0-9_$])`;
  return new RegExp(`${qualified}|${databaseStatement}`, 'i');
}

/**
 * Passes mariadb-binlog's output through unchanged (whole lines), recording each completed transaction in
 * `progress`, and errors (before passing the line on) on a statement that names one of `guarded` itself.
 * Transactions: a GTID event opens a group; see {@link ReplayWatch.onStatement}.
 */
export class ReplayWatch extends Transform {
  private pending: Buffer = Buffer.alloc(0);
  private readonly guard: RegExp | undefined;
  private inBinlogBlock = false;
  /** Inside an account statement being left out, until its delimiter line. */
  private isSkipping = false;
  private group: { isTransaction: boolean; hasContent: boolean } | undefined;
  /** The query event whose text comes next, and its time. */
  private query: { time: Date } | undefined;

  /**
   * @param isGtidKept false when the replay is written to the server's binary log: the original GTID settings
   *   (domain, server id, sequence number) mariadb-binlog writes before each transaction are left out, so the server gives the
   *   replayed transactions new ones in order. Kept, the server would log old sequence numbers after newer ones, and
   *   mariadb-binlog (strict GTID mode, its default) refuses to decode such a log later ("Found out of order GTID").
   */
  constructor(
    guarded: readonly string[],
    private readonly progress: ReplayProgress,
    private readonly isGtidKept = true,
  ) {
    super();
    this.guard = databaseNamesPattern(guarded);
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    let start = 0;
    let keptFrom = 0;
    try {
      for (let newline = data.indexOf(0x0a); newline !== -1; newline = data.indexOf(0x0a, start)) {
        if (!this.inspect(data.toString('latin1', start, newline))) {
          if (start > keptFrom) this.push(data.subarray(keptFrom, start));
          keptFrom = newline + 1;
        }
        start = newline + 1;
      }
    } catch (error) {
      callback(error as Error);
      return;
    }
    // Only whole lines go on: a refused statement's first line never reaches the client.
    if (start > keptFrom) this.push(data.subarray(keptFrom, start));
    this.pending = data.subarray(start);
    callback();
  }

  override _flush(callback: TransformCallback): void {
    let isKept = true;
    try {
      if (this.pending.length > 0) isKept = this.inspect(this.pending.toString('latin1'));
    } catch (error) {
      callback(error as Error);
      return;
    }
    if (this.pending.length > 0 && isKept) this.push(this.pending);
    callback();
  }

  /** Reads one line; answers whether it goes on to the client. */
  private inspect(line: string): boolean {
    if (this.isSkipping) {
      if (line.trimEnd() === '/*!*/;') this.isSkipping = false;
      return false;
    }
    if (this.inBinlogBlock) {
      // Row events and format descriptions: base64 lines until the closing quote.
      if (line.startsWith("'")) this.inBinlogBlock = false;
      return true;
    }
    if (line.startsWith('BINLOG ')) {
      this.inBinlogBlock = !line.slice(7).trimEnd().endsWith("'/*!*/;") || line.trimEnd() === "BINLOG '";
      return true;
    }
    if (line.startsWith('#')) {
      const header = EVENT_HEADER.exec(line);
      if (header) this.onEvent(header);
      return true;
    }
    if (this.isGtidKept === false && GTID_SETTING.test(line)) return false;
    if (this.query && ACCOUNT_STATEMENT.test(line)) {
      this.query = undefined;
      this.isSkipping = true;
      this.progress.accountStatements = (this.progress.accountStatements ?? 0) + 1;
      return false;
    }
    if (line.startsWith('SET ') || line.startsWith('/*!') || line.startsWith('/*M!') || line.startsWith('use ') || line.startsWith('DELIMITER ')) return true;
    this.onStatement(line);
    const named = this.guard?.exec(line);
    if (named) {
      throw new AdapterError(
        ORIGIN,
        'CONFIG',
        `the binary log holds a statement-based event that names another database itself (${named[0].trim()}: a qualified name or a DATABASE statement); --rewrite-db changes only a statement's default database, so replaying it would change that database, not the restored one. The restore stopped before it: choose a target before that statement, or use binlog_format = ROW. The statement begins: ${line.slice(0, 200)}`,
      );
    }
    return true;
  }

  private onEvent(header: RegExpExecArray): void {
    const [, yy, mm, dd, hh, mi, ss, kind] = header;
    const time = new Date(Date.UTC(2000 + Number(yy), Number(mm) - 1, Number(dd), Number(hh), Number(mi), Number(ss)));
    this.query = undefined;
    if (/\t(?:Anonymous_)?GTID\b/.test(kind!)) {
      this.group = { isTransaction: false, hasContent: false };
    } else if (/\tXid = /.test(kind!)) {
      this.endGroup(time);
    } else if (/\tTable_map: /.test(kind!)) {
      if (this.group) this.group.hasContent = true;
    } else if (/\tQuery\b/.test(kind!)) {
      this.query = { time };
    }
  }

  /**
   * The first line of a statement's text. `START TRANSACTION`/`BEGIN` (printed for a GTID group of several events,
   * or a query event of its own) opens a transaction that an `Xid` event or a `COMMIT` query ends; any other query
   * in a group that is not a transaction (DDL) is the whole group.
   */
  private onStatement(line: string): void {
    const text = line.trim();
    if (/^(?:BEGIN|START TRANSACTION)\b/i.test(text)) {
      if (this.group) this.group.isTransaction = true;
      else this.group = { isTransaction: true, hasContent: false };
      this.query = undefined;
      return;
    }
    if (!this.query) return;
    const { time } = this.query;
    this.query = undefined;
    if (/^COMMIT\b/i.test(text)) {
      this.endGroup(time);
    } else if (!this.group) {
      this.commit(time); // a log without GTID events: each statement stands alone
    } else {
      this.group.hasContent = true;
      if (!this.group.isTransaction) this.endGroup(time);
    }
  }

  /**
   * The group's end went to the client. mariadb-binlog prints the GTID and commit of every transaction, also those
   * whose events --database left out: only a group with an event of the restored database counts.
   */
  private endGroup(time: Date): void {
    if (this.group?.hasContent) this.commit(time);
    this.group = undefined;
  }

  private commit(time: Date): void {
    this.progress.transactions++;
    if (!this.progress.lastCommitted || time > this.progress.lastCommitted) this.progress.lastCommitted = time;
  }
}
