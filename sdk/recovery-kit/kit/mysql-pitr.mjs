// `holdfast-decrypt.mjs mysql-pitr`: restores one database of a MySQL/MariaDB logical base backup and its archived
// binary log to a point in time, without Holdfast (docs/pitr.md, "Restoring without Holdfast (MySQL/MariaDB)"). The
// base and the binary log files it needs are decrypted into a private work folder; the database is created new on
// the target server, the base's script loaded into it, and the binary log replayed with mariadb-binlog from the
// base's coordinates to the target, the original database name rewritten. Every refusal comes before anything is
// written; a failure afterwards drops the database the kit created; the work folder is always removed (but with
// --print-only, which prepares it for an operator and prints the commands). A second reader of what the engine and
// the MySQL source write: it shares no code with them.
import { mkdtempSync, statSync } from 'node:fs';
import { chmod, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { codecOfName, codecOfSidecar, decodeFile, ensureDecoder } from './decompress.mjs';
import { EXIT, KitError, readKey } from './hfenc.mjs';
import { parseBinlogPosition, quoted, readMysqlSidecar, writeBaseScript } from './mysql-base.mjs';
import { findGtidEnd, parseGtid, planBinlogs, restoreBinlog, scanBinlogFolder, splitBinlogName } from './mysql-binlog.mjs';
import { ReplayWatch } from './mysql-replay-watch.mjs';
import { findPrograms, isAllowed, loadScript, query, replay, stopRunning, writeClientOptions } from './mysql-server.mjs';

const note = (message) => process.stderr.write(`holdfast-decrypt: ${message}\n`);
const SYSTEM_SCHEMAS = ['mysql', 'information_schema', 'performance_schema', 'sys'];
/** `YYYY-MM-DD HH:MM:SS` of Unix seconds, UTC (mariadb-binlog runs with TZ=UTC). */
const utcDatetime = (seconds) => new Date(seconds * 1000).toISOString().slice(0, 19).replace('T', ' ');

/** Letters, digits, `_`, `$` and `-`, 1 to 64 characters: names every tool takes unquoted in its options. */
export function checkDatabaseName(option, value) {
  if (!/^[\p{L}\p{N}_$-]{1,64}$/u.test(value) || [...value].length > 64) {
    throw new KitError(EXIT.usage, `${option} "${value}" is not a database name this restore takes: use 1 to 64 letters, digits, "_", "$" or "-"`);
  }
  if (option === '--into' && SYSTEM_SCHEMAS.includes(value.toLowerCase())) throw new KitError(EXIT.usage, `--into "${value}" is a system schema: choose another name`);
}

/** The target from the options: exactly one of --target-time, --target-position, --target-gtid, --latest. */
export function parseMysqlTarget(values) {
  const given = ['target-time', 'target-position', 'target-gtid', 'latest'].filter((name) => values[name] !== undefined);
  if (given.length !== 1) throw new KitError(EXIT.usage, 'give exactly one target: --target-time <ISO time with offset>, --target-position <file>:<offset>, --target-gtid <domain-server-sequence> or --latest');
  if (values.latest) return { type: 'latest' };
  // Every transaction up to and including this one, none logged after it: found in the decrypted files, then a position.
  if (values['target-gtid'] !== undefined) return { type: 'gtid', gtid: parseGtid(values['target-gtid']) };
  if (values['target-position'] !== undefined) {
    const position = parseBinlogPosition(values['target-position']);
    if (!position) throw new KitError(EXIT.usage, `--target-position must be <binary log file>:<offset>, like mysql-bin.000042:1234, not "${values['target-position']}"`);
    return { type: 'position', ...position };
  }
  const text = values['target-time'];
  // Without an offset the instant would depend on this machine's time zone: refused rather than guessed.
  if (!/^\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d{1,6})?)?(Z|[+-]\d\d:?\d\d)$/i.test(text)) {
    throw new KitError(EXIT.usage, `--target-time needs an ISO 8601 time with its offset, like 2026-12-06T14:03:27+01:00 or 2026-12-06T13:03:27Z, not "${text}"`);
  }
  const time = new Date(text.replace(' ', 'T'));
  if (Number.isNaN(time.getTime())) throw new KitError(EXIT.usage, `--target-time "${text}" is not a valid time`);
  // Binary log times are whole seconds: the target's own second is not replayed, so nothing after it ever is.
  return { type: 'time', time, stopSeconds: Math.floor(time.getTime() / 1000) };
}

function describeTarget(target) {
  if (target.type === 'time') return `time ${target.time.toISOString()} (every transaction committed before ${utcDatetime(target.stopSeconds)} UTC)`;
  if (target.type === 'position') return `binary log position ${target.file}:${target.offset}${target.gtid ? ` (the end of the transaction with GTID ${target.gtid.text}, included)` : ''}`;
  if (target.type === 'gtid') return `GTID ${target.gtid.text} (its transaction included)`;
  return 'the end of the archived binary log (latest)';
}

/** A target before the base's snapshot cannot be reached: nothing before a base can be undone. */
function checkTargetAfterBase(target, start, consistentAt) {
  if (target.type === 'time' && consistentAt && target.time < consistentAt) {
    throw new KitError(EXIT.target, `target time ${target.time.toISOString()} is before this base backup was taken (${consistentAt.toISOString()}): choose a later time, or an older base backup`);
  }
  if (target.type !== 'position') return;
  const stop = splitBinlogName(target.file);
  const from = splitBinlogName(start.file);
  if (stop.base !== from.base || stop.number < from.number || (stop.number === from.number && target.offset < start.offset)) {
    throw new KitError(EXIT.target, `target position ${target.file}:${target.offset} is not after this base backup's start (${start.file}:${start.offset}): choose a later position, or an older base backup`);
  }
}

/** The key file is read at once (a typo fails before any work); HOLDFAST_KEY only when an encrypted file turns up. */
function keyGetter(keyFile) {
  let key = keyFile ? readKey(keyFile) : undefined;
  return () => (key ??= readKey(undefined));
}

/** What the server says before anything is written: the new name is free, the account may replay, and more. */
function askServer(programs, optionsFile, { database, into }) {
  const [[version] = []] = query(programs.client, optionsFile, 'SELECT VERSION()');
  const existing = query(programs.client, optionsFile, `SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE LOWER(SCHEMA_NAME) = LOWER('${into}')`);
  if (existing.length > 0) {
    throw new KitError(EXIT.io, `database "${existing[0][0]}" already exists on the server: the restore builds a new database; choose another --into, or drop that one first`);
  }
  // The replayed SQL sets pseudo_thread_id and runs BINLOG statements: BINLOG REPLAY on MariaDB 10.5.2+, SUPER before.
  if (!isAllowed(programs.client, optionsFile, 'SET SESSION pseudo_thread_id = CONNECTION_ID()')) {
    throw new KitError(EXIT.server, 'this account may not replay a binary log (SET pseudo_thread_id was refused): grant it BINLOG REPLAY (MariaDB 10.5.2 and later; SUPER before) or connect as an account that has it');
  }
  const outOfBinlog = isAllowed(programs.client, optionsFile, 'SET SESSION sql_log_bin = 0');
  const [original] = query(programs.client, optionsFile, `SELECT DEFAULT_CHARACTER_SET_NAME, DEFAULT_COLLATION_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = '${database}'`);
  const others = query(programs.client, optionsFile, 'SHOW DATABASES').map(([name]) => name);
  return { version, outOfBinlog, charset: original ? ` CHARACTER SET ${original[0]} COLLATE ${original[1]}` : '', others };
}

/** mariadb-binlog's arguments: from the base's coordinates, the database rewritten, to the target. */
function decoderArgs(decoder, { database, into, start, target, outOfBinlog, files }) {
  return [
    // Nothing from this host's option files: a [mysqlbinlog] group must not change what is replayed.
    '--no-defaults',
    ...(database === into ? [] : [`--rewrite-db=${database}->${into}`]),
    // MariaDB's mariadb-binlog filters on the name as logged, before the rewrite; MySQL's on the rewritten name.
    `--database=${decoder.isMariadb ? database : into}`,
    ...(outOfBinlog ? ['--disable-log-bin'] : []),
    // A log holding GTIDs out of order (someone once logged a replay) still decodes.
    ...(decoder.isMariadb ? ['--skip-gtid-strict-mode'] : []),
    `--start-position=${start.offset}`,
    ...(target.type === 'time' ? [`--stop-datetime=${utcDatetime(target.stopSeconds)}`] : []),
    ...(target.type === 'position' ? [`--stop-position=${target.offset}`] : []),
    ...files,
  ];
}

/**
 * Decrypts the binary log files the target needs into `work`, in order: a time target stops after the first file
 * holding an event of its second or later (a later file only holds later events). Refuses a target the files do
 * not reach.
 */
async function restoreBinlogs(plan, work, key, start, target, checkInterrupted) {
  const restored = [];
  let newestSeconds = 0;
  for (const [index, piece] of plan.entries()) {
    checkInterrupted();
    const file = await restoreBinlog(piece, work, key, index === 0 ? start.offset : 4);
    restored.push({ ...piece, ...file });
    newestSeconds = Math.max(newestSeconds, file.newestSeconds);
    if (target.type === 'time' && file.newestSeconds >= target.stopSeconds) break;
  }
  const last = restored[restored.length - 1];
  if (target.type === 'time' && newestSeconds < target.stopSeconds) {
    throw new KitError(
      EXIT.target,
      `target time ${target.time.toISOString()} is after the newest event in the archived binary log (${newestSeconds ? new Date(newestSeconds * 1000).toISOString() : 'none after the base'}): replay cannot show it. Download newer files, choose an earlier time, or restore with --latest`,
    );
  }
  if (target.type === 'position' && last.bytes < target.offset) {
    throw new KitError(EXIT.target, `the archived ${last.name}${last.partial ? ' (a partial)' : ''} ends at byte ${last.bytes}, before the target position ${target.file}:${target.offset}: download a newer copy, or choose an earlier position`);
  }
  return restored;
}

/** Quotes an argument for a POSIX shell when it needs it. */
const shell = (arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`);

function printCommands(options, programs, work, args, files) {
  const { connection } = options;
  const connect = connection.defaultsFile
    ? [`--defaults-extra-file=${resolve(connection.defaultsFile)}`]
    : ['-h', connection.host ?? '127.0.0.1', ...(connection.port ? ['-P', String(connection.port)] : []), ...(connection.user ? ['-u', connection.user] : []), '-p'];
  const client = [programs.client.command, ...connect].map(shell).join(' ');
  const into = options.into;
  process.stdout.write(
    [
      `# Prepared in ${work} (remove it when done): the base's SQL for "${options.database}" and ${files.length} binary log file(s).`,
      `# Restore to ${describeTarget(options.target)} into the new database "${into}":`,
      `${client} -e ${shell(`CREATE DATABASE ${quoted(into)}`)}`,
      `${client} --binary-mode --init-command=${shell('SET SESSION sql_log_bin = 0')} --database=${shell(into)} < ${shell(join(work, 'base.sql'))}`,
      `TZ=UTC ${[programs.decoder.command, ...args].map(shell).join(' ')} | ${client} --binary-mode --database=${shell(into)}`,
      '# --init-command and --disable-log-bin keep the restore out of the server\'s binary log: they need SUPER (BINLOG ADMIN on MariaDB 10.5+); leave them out otherwise.',
      '# The printed pipe has no guard against statement-based events naming another database (the kit\'s own replay stops at one).',
      '',
    ].join('\n'),
  );
}

/** Runs the whole restore; `options`: base, binlogs, database, into, target, keyFile, connection, binDir, workDir, printOnly. */
export async function restoreMysqlToPoint(options) {
  const { target, database, into } = options;
  if (!statSync(options.base, { throwIfNoEntry: false })?.isFile()) throw new KitError(EXIT.io, `base backup not found: ${options.base}`);
  if (!statSync(options.binlogs, { throwIfNoEntry: false })?.isDirectory()) throw new KitError(EXIT.io, `--binlogs ${options.binlogs} is not a folder`);
  const key = keyGetter(options.keyFile);
  const sidecar = readMysqlSidecar(options.base);
  if (sidecar) checkTargetAfterBase(target, sidecar.start, sidecar.consistentAt);
  else note(`no sidecar ${options.base}.meta.json: the base's coordinates are read from its script, and a time target is not checked against when it was taken`);
  const codec = codecOfSidecar(sidecar?.meta) ?? codecOfName(options.base);
  ensureDecoder(codec);
  // Where the base starts is known before any decoding only from the sidecar: the plan's refusals come first then.
  const planFrom = (start) => planBinlogs(scanBinlogFolder(options.binlogs, splitBinlogName(start.file).base).pieces, { startFile: start.file, lastFile: target.type === 'position' ? target.file : undefined });
  if (sidecar) planFrom(sidecar.start);
  const programs = options.printOnly ? findProgramsOrDefaults(options.binDir) : findPrograms(options.binDir);

  if (options.workDir && !statSync(options.workDir, { throwIfNoEntry: false })?.isDirectory()) throw new KitError(EXIT.io, `--work-dir ${options.workDir} is not a folder`);
  const work = mkdtempSync(join(resolve(options.workDir ?? tmpdir()), 'holdfast-mysql-pitr-'));
  await chmod(work, 0o700);
  let isCreated = false;
  let isKept = false;
  let server;
  // Ctrl-C or SIGTERM: the running client and decoder are killed at once, the current decryption ends, and the
  // restore fails through the cleanup below (the database it created dropped, the work folder removed).
  let interruptedBy;
  const onSignal = (signal) => {
    interruptedBy = signal;
    note(`${signal} received: stopping and cleaning up`);
    stopRunning();
  };
  const interrupted = () => new KitError(EXIT.interrupted, `interrupted by ${interruptedBy}`);
  const checkInterrupted = () => {
    if (interruptedBy) throw interrupted();
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    const optionsFile = options.printOnly ? undefined : writeClientOptions(work, options.connection);
    if (!options.printOnly) server = askServer(programs, optionsFile, options);
    checkInterrupted();
    note(`decrypting the base backup ${options.base} (${codec === 'none' ? 'not compressed' : codec}): the SQL of "${database}"`);
    const found = await writeBaseScript((sink) => decodeFile(options.base, { key, codec, sink, label: options.base }), join(work, 'base.sql'), { label: options.base, name: database, into });
    const start = sidecar?.start ?? found.coordinates;
    if (sidecar && (found.coordinates.file !== start.file || found.coordinates.offset !== start.offset)) {
      throw new KitError(EXIT.damaged, `${sidecar.path} says the base starts at ${start.file}:${start.offset}, its script says ${found.coordinates.file}:${found.coordinates.offset}: the sidecar belongs to another backup`);
    }
    if (!sidecar) checkTargetAfterBase(target, start, undefined);
    checkInterrupted();
    let restored = await restoreBinlogs(planFrom(start), work, key, start, target, checkInterrupted);
    checkInterrupted();
    // A GTID target: the decrypted files are searched for its transaction's end, then replayed to it as a position.
    let replayTarget = target;
    if (target.type === 'gtid') {
      const end = await findGtidEnd(restored, start, target.gtid);
      restored = restored.slice(0, end.index + 1);
      replayTarget = { type: 'position', file: restored[end.index].name, offset: end.offset, gtid: target.gtid };
      note(`the transaction of GTID ${target.gtid.text} ends at ${replayTarget.file}:${replayTarget.offset}`);
    }
    const last = restored[restored.length - 1];
    note(`decrypted ${restored.length} binary log file(s), ${restored[0].name} to ${last.name}${last.partial ? ' (the newest from its partial)' : ''}`);
    const outOfBinlog = options.printOnly || server.outOfBinlog;
    const args = decoderArgs(programs.decoder, { database, into, start, target: replayTarget, outOfBinlog, files: restored.map((file) => file.file) });
    if (options.printOnly) {
      printCommands({ ...options, target: replayTarget }, programs, work, args, restored);
      isKept = true;
      return 0;
    }

    query(programs.client, optionsFile, `${server.outOfBinlog ? 'SET SESSION sql_log_bin = 0; ' : ''}CREATE DATABASE ${quoted(into)}${server.charset}`);
    isCreated = true;
    checkInterrupted();
    note(`loading "${database}" of the base backup into the new database "${into}"`);
    await loadScript(programs.client, optionsFile, join(work, 'base.sql'), into, { outOfBinlog: server.outOfBinlog });
    note(`replaying the binary log from ${start.file}:${start.offset} to ${describeTarget(replayTarget)}`);
    const watch = new ReplayWatch([...new Set([...server.others, database])].filter((name) => name !== into), server.outOfBinlog);
    await replay(programs, optionsFile, args, watch, into);
    checkInterrupted();
    report({ database, into, target: replayTarget, server, restored, watch });
    return 0;
  } catch (caught) {
    // After an interrupt, whatever failed (a killed client, a cut pipe) failed because of it.
    const error = interruptedBy ? interrupted() : caught;
    if (isCreated && !dropQuietly(programs, work, options, into, server)) error.isDatabaseLeft = true;
    if (error instanceof KitError || !error.code) throw error;
    throw new KitError(EXIT.io, `${error.code}: ${error.message}`);
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    if (!isKept) await rm(work, { recursive: true, force: true }).catch(() => note(`could not remove the work folder ${work}: remove it by hand`));
  }
}

/** Drops the half-built database the kit created; false (and says so) when it could not. */
function dropQuietly(programs, work, options, into, server) {
  try {
    const optionsFile = writeClientOptions(work, options.connection);
    query(programs.client, optionsFile, `${server?.outOfBinlog ? 'SET SESSION sql_log_bin = 0; ' : ''}DROP DATABASE IF EXISTS ${quoted(into)}`);
    note(`dropped the half-built database "${into}"`);
    return true;
  } catch (error) {
    note(`could not drop the half-built database "${into}" (${error.message}): drop it by hand`);
    return false;
  }
}

/** --print-only on a machine without the programs: the MariaDB names, said so. */
function findProgramsOrDefaults(binDir) {
  try {
    return findPrograms(binDir);
  } catch {
    note('the MariaDB client programs were not found here: the commands name mariadb and mariadb-binlog (MySQL: mysql and mysqlbinlog, with --database=<into> and without --skip-gtid-strict-mode)');
    return { client: { command: 'mariadb', isMariadb: true }, decoder: { command: 'mariadb-binlog', isMariadb: true } };
  }
}

function report({ database, into, target, server, restored, watch }) {
  const last = restored[restored.length - 1];
  if (!server.outOfBinlog) note(`this account may not turn off binary logging for its session (SUPER, or BINLOG ADMIN on MariaDB 10.5+): "${into}" was written to the server's binary log`);
  if (watch.accountStatements > 0) note(`${watch.accountStatements} account statement(s) (CREATE USER, GRANT, ...) were not replayed: accounts are server-wide, not part of the database`);
  process.stdout.write(
    [
      `Restored "${database}" of the base backup into the new database "${into}" (server ${server.version}), to ${describeTarget(target)}.`,
      `Replayed ${watch.transactions} transaction(s) of "${database}" from ${restored.length} binary log file(s), ${restored[0].name} to ${last.name}${last.partial ? ' (the newest from its partial)' : ''}.`,
      watch.lastBegan
        ? `The last one replayed began at ${watch.lastBegan.toISOString()} (binary log times are whole seconds).`
        : `No transaction of "${database}" was replayed after the base backup: "${into}" is as of the base.`,
      '',
    ].join('\n'),
  );
}
