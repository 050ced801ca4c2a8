// The restore to a point in time of a MySQL/MariaDB source (docs/pitr.md, "MySQL and MariaDB"): one database of a
// logical base is loaded into a new database on the source's own server, then the archived binary log is replayed
// into it from the base's coordinates up to the target, with the database rewritten, so the original is never
// touched. Refusals come first and write nothing; a failure or an abort drops the half-built database.
import type mysql from 'mysql2/promise';
import type { Readable } from 'node:stream';
import { AdapterError, isAdapterError, peekHead, type PointRestoreInput, type PointRestoreResult } from '@holdfast/sdk';
import type { MysqlSourceConfig } from '../../config.js';
import { connectionError, ORIGIN, quoteIdentifier, withConnection } from '../connection.js';
import type { ClientTools } from '../tools.js';
import { formatGtid, locateGtidEnd } from './binlog-gtid.js';
import { replaySql, utcDatetime, type ReplayPlan, type ReplayStop } from './binlog-replay.js';
import type { ReplayProgress } from './binlog-replay-watch.js';
import { resolveBinlogTool } from './binlog-tool.js';
import { baseScript, openBase } from './point-restore-base.js';
import { runSqlClient } from './point-restore-client.js';
import { checkRequest } from './point-restore-request.js';
import { isPhysicalBase, openPhysicalBase, type PhysicalBase } from './physical-restore.js';

/** MySQL and MariaDB: "Access denied; you need (at least one of) the ... privilege(s)". */
const SPECIFIC_ACCESS_DENIED = 1227;
const DATABASE_EXISTS = 1007;

/** What the restoring account may do to its own session. */
interface SessionRights {
  /** `SET SESSION sql_log_bin = 0`: the restore stays out of the server's binary log. */
  mayLeaveBinlog: boolean;
}

/** Runs a session statement; false when the account lacks the privilege for it. */
async function isAllowed(connection: mysql.Connection, statement: string): Promise<boolean> {
  try {
    await connection.query(statement);
    return true;
  } catch (error) {
    if ((error as { errno?: number }).errno === SPECIFIC_ACCESS_DENIED) return false;
    throw error;
  }
}

/**
 * What the restoring account may do, asked of the server on a throwaway session. The replayed SQL sets
 * `pseudo_thread_id` (and the GTID variables) and runs `BINLOG` statements for row events: all need BINLOG REPLAY
 * on MariaDB 10.5.2 and later (SUPER before; SESSION_VARIABLES_ADMIN or SYSTEM_VARIABLES_ADMIN on MySQL), so
 * without it the replay would fail at its first transaction, after the base was loaded: refused first instead.
 */
async function sessionRights(connection: mysql.Connection, config: MysqlSourceConfig): Promise<SessionRights> {
  if (!(await isAllowed(connection, 'SET SESSION pseudo_thread_id = CONNECTION_ID()'))) {
    throw new AdapterError(
      ORIGIN,
      'CONFIG',
      `account ${config.user} may not replay a binary log (SET pseudo_thread_id was refused): grant it BINLOG REPLAY (MariaDB 10.5.2 and later; SUPER before) or restore with an account that has it`,
    );
  }
  return { mayLeaveBinlog: await isAllowed(connection, 'SET SESSION sql_log_bin = 0') };
}

async function databaseExists(connection: mysql.Connection, name: string): Promise<{ charset: string; collation: string } | undefined> {
  const [rows] = await connection.query<mysql.RowDataPacket[]>('SELECT DEFAULT_CHARACTER_SET_NAME AS charset, DEFAULT_COLLATION_NAME AS collation FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [name]);
  return rows[0] ? { charset: String(rows[0].charset), collation: String(rows[0].collation) } : undefined;
}

/** The session settings the base's script runs after. */
function withPrelude(prelude: string, script: Readable | AsyncIterable<Buffer>): AsyncIterable<Buffer> {
  return (async function* () {
    if (prelude) yield Buffer.from(prelude, 'utf8');
    for await (const chunk of script) yield chunk as Buffer;
  })();
}

/** Every refusal, in order; answers what the restore needs from them. Reads the base's header line, writes nothing. */
async function refusalsPassed(config: MysqlSourceConfig, tools: ClientTools, input: PointRestoreInput) {
  const request = checkRequest(input);
  const binlogTool = await resolveBinlogTool(config);
  const { rights, original, others } = await withConnection(config, async (connection) => {
    if (await databaseExists(connection, request.into)) {
      throw new AdapterError(ORIGIN, 'CONFIG', `database "${request.into}" already exists on ${config.host}:${config.port}: a point-in-time restore builds a new database; choose another database.into or drop it first`);
    }
    const [listed] = await connection.query<mysql.RowDataPacket[]>('SHOW DATABASES');
    const others = listed.map((row) => String(Object.values(row)[0]));
    return { rights: await sessionRights(connection, config), original: await databaseExists(connection, request.name), others };
  });
  // A GTID target becomes the position where its transaction ends, read from the archive: a GTID the archive does
  // not hold after the base is refused here, before anything is written.
  let stop: ReplayStop;
  if (request.stop.type === 'gtid') {
    input.onProgress?.(`looking for GTID ${formatGtid(request.stop.gtid)} in the archived binary log from ${request.startFile}:${request.startOffset}`);
    const end = await locateGtidEnd(request.stop.gtid, request, (name) => input.fetchSegment(name), input.signal);
    input.onProgress?.(`the transaction of GTID ${formatGtid(request.stop.gtid)} ends at ${end.file}:${end.offset}`);
    stop = { type: 'position', ...end };
  } else {
    stop = request.stop;
  }
  // The base's first line says its kind: a physical base (mariadb-backup) is prepared and served by a throwaway
  // server, which also answers whether it holds the database; a logical base is a dump script.
  const { head, whole } = await peekHead(input.baseStream, { enough: (bytes) => bytes.includes(0x0a), limit: 64 * 1024 });
  if (isPhysicalBase(head)) {
    const physical: PhysicalBase = await openPhysicalBase(config, tools, whole, request.name, input.signal);
    return { request: { ...request, stop }, binlogTool, rights, original, base: undefined, physical, others };
  }
  const base = await openBase(whole);
  if (!base.header.databases.includes(request.name)) {
    throw new AdapterError(ORIGIN, 'CONFIG', `the base backup holds no database "${request.name}" (it holds ${base.header.databases.map((name) => `"${name}"`).join(', ')})`);
  }
  return { request: { ...request, stop }, binlogTool, rights, original, base, physical: undefined, others };
}

/** Rebuilds `input.database.name` of the base as `input.database.into`, as of `input.target`. */
export async function restoreToPoint(config: MysqlSourceConfig, tools: ClientTools, input: PointRestoreInput): Promise<PointRestoreResult> {
  const { signal } = input;
  const progress = (message: string) => input.onProgress?.(message);
  const warnings: string[] = [];
  // The base stream is of no use after a failure: destroyed, so whatever feeds it stops too.
  const abandonBase = () => (input.baseStream as Readable | undefined)?.destroy();

  // Refusals first: nothing is written until every one has passed.
  const prepared = await refusalsPassed(config, tools, input).catch((error: unknown) => {
    abandonBase();
    throw error;
  });
  const { request, binlogTool, rights, original, base, physical, others } = prepared;
  const { name, into } = request;
  if (!rights.mayLeaveBinlog) {
    warnings.push(
      `account ${config.user} may not turn off binary logging for its session (SET sql_log_bin needs SUPER, or BINLOG ADMIN on MariaDB 10.5 and later): the restored database "${into}" was written to the server's binary log, so the stream archives it again`,
    );
  }

  let isCreated = false;
  // An abort also stops a base load waiting for the base's next bytes: the stream is destroyed at once.
  signal.addEventListener('abort', abandonBase, { once: true });
  try {
    if (signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', 'the point-in-time restore was aborted');
    await withConnection(config, async (connection) => {
      if (rights.mayLeaveBinlog) await connection.query('SET SESSION sql_log_bin = 0');
      // The original's character set where it still exists; a multi-database base states its own (ALTER below).
      const charset = original ? ` CHARACTER SET ${original.charset} COLLATE ${original.collation}` : '';
      try {
        await connection.query(`CREATE DATABASE ${quoteIdentifier(into)}${charset}`);
      } catch (error) {
        if ((error as { errno?: number }).errno === DATABASE_EXISTS) throw new AdapterError(ORIGIN, 'CONFIG', `database "${into}" was created by someone else while the restore started: choose another database.into`);
        throw connectionError(error, config);
      }
      isCreated = true;
    });

    progress(`loading "${name}" of the base backup into "${into}"`);
    const prelude = rights.mayLeaveBinlog ? 'SET SESSION sql_log_bin = 0;\n' : '';
    const script = physical ? physical.script() : await baseScript(base!, name, into);
    await runSqlClient(config, tools, withPrelude(prelude, script), into, signal, `loading the base backup into "${into}"`);

    const replayed: ReplayProgress = { transactions: 0 };
    let files = 0;
    const plan: ReplayPlan = {
      tool: binlogTool,
      startFile: request.startFile,
      startOffset: request.startOffset,
      stop: request.stop,
      original: name,
      into,
      // Restoring into the original name (it was dropped) lets statements name it; never any other database.
      guarded: [...new Set([...others, name])].filter((database) => database !== into),
      isOutOfBinlog: rights.mayLeaveBinlog,
      fetchSegment: (segment) => input.fetchSegment(segment),
      signal,
      progress: replayed,
      onFile: (segment) => {
        files++;
        progress(`replaying ${segment}${files === 1 ? ` from byte ${request.startOffset}` : ''}`);
      },
    };
    const stop = request.stop;
    await physical?.close();
    progress(`replaying the binary log from ${request.startFile}:${request.startOffset}${stop.type === 'time' ? ` until before ${utcDatetime(stop.seconds)} UTC` : stop.type === 'position' ? ` until ${stop.file}:${stop.offset}` : ' to its end'}`);
    await runSqlClient(config, tools, replaySql(plan), into, signal, `replaying the binary log into "${into}"`);

    if (replayed.accountStatements) {
      warnings.push(`${replayed.accountStatements} account statement(s) (CREATE USER, GRANT, …) logged while "${name}" was the default database were not replayed: accounts are server-wide, not part of the database`);
    }
    if (files === 0) warnings.push(`the archive holds no binary log from the base's position (${request.startFile}): "${into}" is as of the base backup`);
    else if (!replayed.lastCommitted) warnings.push(`the replayed binary log held no transaction of "${name}" after the base backup: "${into}" is as of the base backup`);
    progress(`replayed ${replayed.transactions} transactions from ${files} binary log files${replayed.lastCommitted ? `; the last began at ${replayed.lastCommitted.toISOString()}` : ''}`);
    return { warnings, ...(replayed.lastCommitted ? { recoveredTo: replayed.lastCommitted } : {}) };
  } catch (error) {
    abandonBase();
    const left = isCreated ? await dropQuietly(config, into) : undefined;
    const reason = signal.aborted && !(isAdapterError(error) && error.code === 'ABORTED') ? new AdapterError(ORIGIN, 'ABORTED', 'the point-in-time restore was aborted', { cause: error }) : error;
    if (!left || !(reason instanceof Error)) throw reason;
    const message = reason.message.replace(/^\[source-mysql\] /, '');
    throw new AdapterError(ORIGIN, isAdapterError(reason) ? reason.code : 'TRANSIENT', `${message} (the half-built database "${into}" could not be dropped: ${left}; drop it by hand)`, { cause: reason });
  } finally {
    await physical?.close();
    signal.removeEventListener('abort', abandonBase);
  }
}

/** Drops the half-built database; answers why it could not, or undefined when it is gone. */
async function dropQuietly(config: MysqlSourceConfig, into: string): Promise<string | undefined> {
  try {
    await withConnection(config, async (connection) => {
      await connection.query('SET SESSION sql_log_bin = 0').catch(() => undefined);
      await connection.query(`DROP DATABASE IF EXISTS ${quoteIdentifier(into)}`);
    });
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
