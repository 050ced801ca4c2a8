// Reads the SQL mariadb-binlog writes, line by line, on its way into the client (`mysql-pitr`):
// - it counts the replayed transactions of the restored database and remembers when the last one began (whole
//   seconds, from the event header lines), for the report;
// - it stops a statement-based event that names another database itself (`UPDATE shop.orders ...`, `DROP DATABASE
//   shop`) before the client receives it: --rewrite-db changes only a statement's default database, so replaying
//   it would change that database, never the restored one;
// - it leaves out account statements (CREATE USER, GRANT, ...): the server logs them with the session's default
//   database, but accounts are server-wide and replaying one would change the live server's accounts;
// - when the replay is written to the server's binary log (the account may not turn that off), it leaves out the
//   original GTID settings so the server numbers the replayed transactions anew, in order.
import { Transform } from 'node:stream';
import { EXIT, KitError } from './hfenc.mjs';

/** `#261206 22:13:05 server id 1  end_log_pos 456 CRC32 0x1a2b3c4d \tGTID 0-1-7 trans` (UTC: the tool runs with TZ=UTC). */
const EVENT_LINE = /^#(\d\d)(\d\d)(\d\d) +(\d\d?):(\d\d):(\d\d) +server id \d+ +end_log_pos \d+(.*)$/;
const GTID_SETTING = /^\/\*M?!\d+ SET @@session\.(?:gtid_domain_id|server_id|gtid_seq_no)=\d+\*\/\/\*!\*\/;\s*$/;
const ACCOUNT_STATEMENT = /^\s*(?:(?:CREATE|DROP|ALTER|RENAME)\s+(?:USER|ROLE)|GRANT|REVOKE|SET\s+(?:PASSWORD|DEFAULT\s+ROLE))\b/i;
const PASSED_AS_IS = /^(?:SET |\/\*!|\/\*M!|use |DELIMITER )/;

const literal = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A qualified name (`db.`, `` `db`. ``) or a DATABASE/SCHEMA statement naming one of `databases`. */
function namingPattern(databases) {
  if (databases.length === 0) return undefined;
  const name = `(?:${databases.flatMap((database) => [literal(database), literal(`\`${database}\``)]).join('|')})`;
  return new RegExp(`(?:^|[^A-Za-z0-9_$\`])${name}\\s*\\.|\\b(?:DATABASE|SCHEMA)\\s+(?:IF\\s+(?:NOT\\s+)?EXISTS\\s+)?${name}(?![A-Za-z0-9_$])`, 'i');
}

export class ReplayWatch extends Transform {
  /**
   * @param guarded databases no statement may name itself (every other database of the server, and the original)
   * @param keepGtids false when the replay goes into the server's binary log
   */
  constructor(guarded, keepGtids) {
    super();
    this.guard = namingPattern(guarded);
    this.keepGtids = keepGtids;
    this.transactions = 0;
    this.lastBegan = undefined;
    this.accountStatements = 0;
    this.pending = Buffer.alloc(0);
    this.inBinlog = false;
    this.skipping = false;
    this.group = undefined;
    this.query = undefined;
  }

  _transform(chunk, _encoding, callback) {
    const data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    let start = 0;
    let keptFrom = 0;
    try {
      for (let newline = data.indexOf(0x0a); newline !== -1; newline = data.indexOf(0x0a, start)) {
        if (!this.passes(data.toString('latin1', start, newline))) {
          if (start > keptFrom) this.push(data.subarray(keptFrom, start));
          keptFrom = newline + 1;
        }
        start = newline + 1;
      }
    } catch (error) {
      return callback(error);
    }
    // Whole lines only: the first line of a refused statement never reaches the client.
    if (start > keptFrom) this.push(data.subarray(keptFrom, start));
    this.pending = Buffer.from(data.subarray(start));
    callback();
  }

  _flush(callback) {
    try {
      if (this.pending.length > 0 && this.passes(this.pending.toString('latin1'))) this.push(this.pending);
    } catch (error) {
      return callback(error);
    }
    callback();
  }

  /** Reads one line; answers whether it goes on to the client. */
  passes(line) {
    if (this.skipping) {
      if (line.trimEnd() === '/*!*/;') this.skipping = false;
      return false;
    }
    if (this.inBinlog) {
      // Row events are base64 lines inside BINLOG '...' until the closing quote.
      if (line.startsWith("'")) this.inBinlog = false;
      return true;
    }
    if (line.startsWith('BINLOG ')) {
      this.inBinlog = !line.trimEnd().endsWith("'/*!*/;") || line.trimEnd() === "BINLOG '";
      return true;
    }
    if (line.startsWith('#')) {
      const event = EVENT_LINE.exec(line);
      if (event) this.onEvent(event);
      return true;
    }
    if (!this.keepGtids && GTID_SETTING.test(line)) return false;
    if (this.query && ACCOUNT_STATEMENT.test(line)) {
      this.query = undefined;
      this.skipping = true;
      this.accountStatements += 1;
      return false;
    }
    if (PASSED_AS_IS.test(line)) return true;
    this.onStatement(line.trim());
    const named = this.guard?.exec(line);
    if (named) {
      throw new KitError(
        EXIT.server,
        `the binary log holds a statement-based event that names another database itself (${named[0].trim()}); --rewrite-db changes only a statement's default database, so replaying it would change that database. The replay stopped before it: choose a target before that statement. It begins: ${line.slice(0, 200)}`,
      );
    }
    return true;
  }

  onEvent([, yy, mm, dd, hh, mi, ss, kind]) {
    const time = new Date(Date.UTC(2000 + Number(yy), Number(mm) - 1, Number(dd), Number(hh), Number(mi), Number(ss)));
    this.query = undefined;
    if (/\t(?:Anonymous_)?GTID\b/.test(kind)) this.group = { isTransaction: false, hasContent: false };
    else if (/\tXid = /.test(kind)) this.endGroup(time);
    else if (/\tTable_map: /.test(kind) && this.group) this.group.hasContent = true;
    else if (/\tQuery\b/.test(kind)) this.query = { time };
  }

  /** BEGIN opens a transaction that an Xid event or a COMMIT ends; any other statement of a group is its content. */
  onStatement(text) {
    if (/^(?:BEGIN|START TRANSACTION)\b/i.test(text)) {
      if (this.group) this.group.isTransaction = true;
      else this.group = { isTransaction: true, hasContent: false };
      this.query = undefined;
      return;
    }
    if (!this.query) return;
    const { time } = this.query;
    this.query = undefined;
    if (/^COMMIT\b/i.test(text)) this.endGroup(time);
    else if (!this.group) this.count(time);
    else {
      this.group.hasContent = true;
      if (!this.group.isTransaction) this.endGroup(time);
    }
  }

  /** mariadb-binlog prints the GTID and commit of every transaction: only one with an event of the database counts. */
  endGroup(time) {
    if (this.group?.hasContent) this.count(time);
    this.group = undefined;
  }

  count(time) {
    this.transactions += 1;
    if (!this.lastBegan || time > this.lastBegan) this.lastBegan = time;
  }
}
