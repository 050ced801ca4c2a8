// Can this server and account feed point-in-time recovery (issue 44)? The binary log stream reads the server's binary
// log the way a replica does: binary logging must be on (`log_bin`, a restart to change), the server needs a non-zero
// `server_id`, and the account needs REPLICATION SLAVE (the binlog dump itself) and REPLICATION CLIENT (called BINLOG
// MONITOR since MariaDB 10.5: SHOW BINARY LOGS, which the stream reads to resume and to notice purged files). Each
// missing piece becomes one sentence telling the operator what to change; settings that replay but not exactly
// (binlog_format, binlog_row_image) are warnings.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type mysql from 'mysql2/promise';
import { AdapterError } from '@holdfast/sdk';
import type { MysqlSourceConfig } from '../../config.js';
import { scrub, withConnection } from '../connection.js';
import { writeOptionsFile } from '../tools.js';
import { listBinaryLogs, readBinlogSettings, type BinlogSettings } from './binlog-server.js';
import { binlogConnectionArgs, resolveBinlogTool, type BinlogTool } from './binlog-tool.js';

/** Outcome of asking the server for a few events of its binary log, as the stream will. */
export type BinlogDumpProbe =
  | { accepted: true }
  | { accepted: false; serverMessage: string }
  /** Not tried: no binary log to read (logging off, or SHOW BINARY LOGS refused so no file name is known). */
  | { accepted: undefined; reason: string };

export interface BinlogCheck extends BinlogSettings {
  /** SHOW BINARY LOGS answered (REPLICATION CLIENT / BINLOG MONITOR, or a privilege that includes it). */
  canListBinlogs: boolean;
  /** REPLICATION SLAVE: from the dump probe when it ran, else from the account's global privileges. */
  canReadBinlog: boolean;
  binlogs: string[];
  probe: BinlogDumpProbe;
  /** The binlog reader on the Holdfast host, when found. */
  tool?: BinlogTool;
  /** One human sentence per missing setting or privilege; empty when the source is ready. */
  problems: string[];
  /** Settings that work but do not give exact restores, or make each flush costly. */
  warnings: string[];
  ready: boolean;
}

/** Above this, every flush archives a large file (a partial is the whole file being written so far). */
const LARGE_BINLOG_BYTES = 256 * 1024 * 1024;

/** Asks the server, then tries a short binlog dump; a failing ordinary connection throws as elsewhere. */
export async function checkBinlog(config: MysqlSourceConfig): Promise<BinlogCheck> {
  const { settings, listing, privileges } = await withConnection(config, async (connection) => ({
    settings: await readBinlogSettings(connection),
    listing: await listBinaryLogs(connection),
    privileges: await globalPrivileges(connection),
  }));
  const binlogs = listing.ok ? listing.logs.map((log) => log.name) : [];
  const tool = await resolveBinlogTool(config).catch((error: unknown) => error as AdapterError);
  const probe: BinlogDumpProbe =
    tool instanceof AdapterError
      ? { accepted: undefined, reason: tool.message }
      : binlogs.length > 0
        ? await probeBinlogDump(config, tool, binlogs.at(-1)!)
        : { accepted: undefined, reason: settings.logBin ? 'no binary log name is known (SHOW BINARY LOGS was refused)' : 'binary logging is off' };
  // A refusal that is about the privilege decides; any other refusal leaves the privilege to the account's grants
  // (and is reported in the tool's words below).
  const refusedForPrivilege = probe.accepted === false && /REPLICATION SLAVE|access denied/i.test(probe.serverMessage);
  const hasPrivilege = privileges.has('REPLICATION SLAVE') || privileges.has('ALL PRIVILEGES');
  const canReadBinlog = probe.accepted === true || (!refusedForPrivilege && hasPrivilege);
  const canListBinlogs = listing.ok || (listing.errno !== 1227 && !/access denied/i.test(listing.message));
  const check = { ...settings, canListBinlogs, canReadBinlog, binlogs, probe, ...(tool instanceof AdapterError ? {} : { tool }) };
  const problems = binlogProblems(config, check, tool instanceof AdapterError ? tool.message : undefined);
  return { ...check, problems, warnings: binlogWarnings(config, settings), ready: problems.length === 0 };
}

/**
 * The account's global privileges as the server lists them for it. Only a fallback: privileges that come through a
 * role are not listed, which is why the dump probe decides whenever it can run.
 */
async function globalPrivileges(connection: mysql.Connection): Promise<Set<string>> {
  const [rows] = await connection.query<mysql.RowDataPacket[]>(
    `SELECT PRIVILEGE_TYPE AS privilege FROM information_schema.USER_PRIVILEGES
      WHERE GRANTEE = CONCAT("'", SUBSTRING_INDEX(CURRENT_USER(), '@', 1), "'@'", SUBSTRING_INDEX(CURRENT_USER(), '@', -1), "'")`,
  );
  return new Set(rows.map((row) => String(row.privilege).toUpperCase()));
}

/**
 * Reads the first event of `log` with the binlog reader, the way the stream reads the whole log: the server refuses
 * an account without REPLICATION SLAVE here, whatever role or alias grants it otherwise.
 */
async function probeBinlogDump(config: MysqlSourceConfig, tool: BinlogTool, log: string): Promise<BinlogDumpProbe> {
  const options = await writeOptionsFile(config);
  try {
    const args = [...options.args, ...binlogConnectionArgs(config, tool), '--read-from-remote-server', '--start-position=4', '--stop-position=5', log];
    const child = spawn(tool.command, args, { env: { PATH: process.env.PATH, LANG: 'C.UTF-8' }, stdio: ['ignore', 'ignore', 'pipe'], timeout: (config.connectTimeoutSeconds + 20) * 1000 });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text: string) => (stderr = (stderr + text).slice(-4000)));
    const [code] = (await once(child, 'close')) as [number | null];
    if (code === 0) return { accepted: true };
    return { accepted: false, serverMessage: scrub(stderr.trim() || `${tool.command} exited ${String(code)}`, config) };
  } finally {
    await options.remove();
  }
}

/** One sentence per problem, in the order an operator would fix them (configuration and restart first, then grants). */
export function binlogProblems(
  config: Pick<MysqlSourceConfig, 'host' | 'port' | 'user'>,
  check: Omit<BinlogCheck, 'problems' | 'warnings' | 'ready'>,
  toolMissing?: string,
): string[] {
  const server = `${config.host}:${config.port}`;
  const grantee = granteeOf(check.account, config.user);
  const problems: string[] = [];
  if (!check.logBin) {
    problems.push(
      `binary logging is off on ${server} (log_bin); point-in-time recovery streams the binary log: set log_bin = mysql-bin and server_id in the [mysqld] section of the server's configuration and restart the server.`,
    );
  }
  if (check.serverId === 0) {
    problems.push(
      `server_id is 0 on ${server}; a binary log that replicas and Holdfast read needs a server_id above 0 (replicas refuse a primary whose server_id is 0): set server_id to a unique number above 0 (SET GLOBAL server_id = 1, and in the configuration so a restart keeps it).`,
    );
  }
  if (!check.canReadBinlog) {
    problems.push(
      `account ${grantee} lacks the REPLICATION SLAVE privilege, which reading the binary log as a replica needs: run GRANT REPLICATION SLAVE ON *.* TO ${grantee}; as an administrator.`,
    );
  }
  if (!check.canListBinlogs) {
    problems.push(
      `account ${grantee} lacks the REPLICATION CLIENT privilege (BINLOG MONITOR on MariaDB 10.5 and later), which SHOW BINARY LOGS needs (the stream lists the server's binary logs to resume and to notice purged ones): run GRANT REPLICATION CLIENT ON *.* TO ${grantee}; as an administrator.`,
    );
  }
  // Any other refusal of the dump is reported in the reader's own words, unless a sentence above explains it.
  if (check.probe.accepted === false && check.canReadBinlog && check.serverId !== 0) {
    problems.push(`${server} refused to send its binary log to ${grantee}: ${check.probe.serverMessage}`);
  }
  if (toolMissing) problems.push(`${toolMissing}.`);
  return problems;
}

/** Sentences about settings that stream and replay, but not exactly or not cheaply. */
export function binlogWarnings(config: Pick<MysqlSourceConfig, 'host' | 'port'>, settings: BinlogSettings): string[] {
  const server = `${config.host}:${config.port}`;
  if (!settings.logBin) return [];
  const warnings: string[] = [];
  if (settings.binlogFormat.toUpperCase() !== 'ROW') {
    warnings.push(
      `binlog_format is ${settings.binlogFormat} on ${server}: statement events replay, but a statement whose result depends on when or where it runs (UUID(), RAND(), LIMIT without ORDER BY, ...) may replay differently; set binlog_format = ROW for exact point-in-time restores.`,
    );
  }
  if (settings.binlogRowImage !== undefined && settings.binlogRowImage.toUpperCase() !== 'FULL') {
    warnings.push(
      `binlog_row_image is ${settings.binlogRowImage} on ${server}: row events then carry only some columns and replay only into tables with a primary key; set binlog_row_image = FULL.`,
    );
  }
  if (settings.maxBinlogSize > LARGE_BINLOG_BYTES) {
    warnings.push(
      `max_binlog_size is ${Math.round(settings.maxBinlogSize / 1024 / 1024)} MiB on ${server}: every flush archives the whole binary log file being written so far; a smaller size (for example max_binlog_size = 64M) keeps each flush small.`,
    );
  }
  return warnings;
}

/** `'user'@'host'` of the matched account, for GRANT statements. */
function granteeOf(account: string, user: string): string {
  const at = account.lastIndexOf('@');
  const [name, host] = at > 0 ? [account.slice(0, at), account.slice(at + 1)] : [user, '%'];
  return `'${name.replaceAll("'", "''")}'@'${host.replaceAll("'", "''")}'`;
}
