// A physical base backup for point-in-time recovery (MariaDB): `mariadb-backup --backup --stream=xbstream` copies the
// server's data files while it runs and streams them on stdout, which become the base's bytes after one header line
// (PHYSICAL_HEADER_PREFIX) that tells a restore this is not a dump script. The binary log coordinates come from the
// tool's own report "MySQL binlog position: filename '...', position '...'", printed while it holds BACKUP STAGE
// BLOCK_COMMIT (the same values it writes into xtrabackup_binlog_info inside the stream): the data files are
// consistent exactly there once prepared. mariadb-backup reads the data directory, so it only works on the server's
// own host (docs/pitr.md, "Physical base backups").
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { access, chmod, constants, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type mysql from 'mysql2/promise';
import { AdapterError, isAbortError, toDumpHandle, type BaseBackupHandle, type BaseBackupInfo, type BaseBackupStats } from '@holdfast/sdk';
import type { MysqlSourceConfig } from '../../config.js';
import { ORIGIN, scrub, userDatabases, withConnection } from '../connection.js';
import { writeOptionsFile } from '../tools.js';
import { formatBinlogPosition } from './binlog-names.js';
import { readBinlogSettings } from './binlog-server.js';
import { serverIdentity } from './logical-base.js';

/** The first line of a physical base; the xbstream bytes follow it. */
export const PHYSICAL_HEADER_PREFIX = '-- holdfast-mysql-physical: ';

/** What a physical base holds, as its header line says. */
export interface PhysicalHeader {
  version: 1;
  format: 'xbstream';
  /** The user databases when the backup started (the stream holds every database of the server). */
  databases: string[];
}

const POSITION_LINE = /MySQL binlog position: filename '([^']+)', position '(\d+)'/;

/** The tools a physical base and its restore need, on the Holdfast host. */
export interface PhysicalTools {
  backup: string;
  mbstream: string;
  /** The server binary the restore starts on the prepared copy (often in sbin, off a normal user's PATH). */
  server: string;
}

async function isExecutable(file: string): Promise<boolean> {
  return access(file, constants.X_OK).then(
    () => true,
    () => false,
  );
}

/** Finds `name` in binDirectory when set, else on PATH, then in the system folders servers live in. */
async function findTool(config: MysqlSourceConfig, name: string, extraFolders: string[] = []): Promise<string | undefined> {
  const folders = config.binDirectory ? [config.binDirectory] : [...(process.env.PATH ?? '').split(path.delimiter).filter(Boolean), ...extraFolders];
  for (const folder of folders) {
    const candidate = path.join(folder, name);
    if (await isExecutable(candidate)) return candidate;
  }
  return undefined;
}

/** mariadb-backup, mbstream and mariadbd; undefined (with what is missing) when one is not installed. */
export async function findPhysicalTools(config: MysqlSourceConfig): Promise<{ tools?: PhysicalTools; missing: string[] }> {
  const backup = await findTool(config, 'mariadb-backup');
  const mbstream = await findTool(config, 'mbstream');
  const server = (await findTool(config, 'mariadbd', ['/usr/sbin', '/usr/local/sbin'])) ?? (await findTool(config, 'mysqld', ['/usr/sbin', '/usr/local/sbin']));
  const missing = [...(backup ? [] : ['mariadb-backup']), ...(mbstream ? [] : ['mbstream']), ...(server ? [] : ['mariadbd'])];
  return backup && mbstream && server ? { tools: { backup, mbstream, server }, missing } : { missing };
}

/** Which base kind a backup takes, and why (for the log and the error of an explicit `physical`). */
export interface BaseChoice {
  kind: 'logical' | 'physical';
  tools?: PhysicalTools;
  reason: string;
}

/**
 * `logical` always dumps; `physical` requires the tools and a readable data directory (CONFIG otherwise); `auto` takes
 * a physical base when both hold and the server is MariaDB, and the logical dump otherwise.
 */
export async function chooseBase(config: MysqlSourceConfig): Promise<BaseChoice> {
  if (config.baseMethod === 'logical') return { kind: 'logical', reason: 'baseMethod is logical' };
  const found = await findPhysicalTools(config);
  const server = await withConnection(config, async (connection) => {
    const [rows] = await connection.query<mysql.RowDataPacket[]>('SELECT @@datadir AS datadir, VERSION() AS version');
    return { datadir: String(rows[0]?.datadir ?? ''), isMariadb: /mariadb/i.test(String(rows[0]?.version ?? '')) };
  });
  const isReadable = server.datadir !== '' && (await access(server.datadir, constants.R_OK | constants.X_OK).then(
    () => true,
    () => false,
  ));
  const problems = [
    ...(found.missing.length > 0 ? [`${found.missing.join(', ')} not found ${config.binDirectory ? `in ${config.binDirectory}` : 'on PATH'}`] : []),
    ...(server.isMariadb ? [] : ['the server is not MariaDB (xtrabackup for MySQL is not supported yet)']),
    ...(isReadable ? [] : [`the server's data directory ${server.datadir || '(unknown)'} is not readable here (mariadb-backup must run on the database host)`]),
  ];
  if (problems.length === 0) return { kind: 'physical', tools: found.tools, reason: `mariadb-backup found and ${server.datadir} readable` };
  if (config.baseMethod === 'physical') {
    throw new AdapterError(ORIGIN, 'CONFIG', `baseMethod is physical, but a physical base backup is not possible: ${problems.join('; ')}. Install mariadb-backup on the database host or set baseMethod to auto or logical`);
  }
  return { kind: 'logical', reason: problems.join('; ') };
}

/** The xbstream of the whole server after the header line; mariadb-backup must exit 0 and report its coordinates. */
async function* physicalOutput(config: MysqlSourceConfig, tools: PhysicalTools, header: PhysicalHeader, found: { line?: RegExpExecArray; seenAt?: Date }, signal: AbortSignal): AsyncGenerator<Buffer> {
  const options = await writeOptionsFile(config);
  // mariadb-backup keeps its own bookkeeping in --target-dir even when streaming: a private folder, removed after.
  const work = await mkdtemp(path.join(tmpdir(), 'holdfast-mariadb-backup-'));
  await chmod(work, 0o700);
  const args = [...options.args, '--backup', '--stream=xbstream', `--target-dir=${work}`, '--host', config.host, '--port', String(config.port), '--user', config.user, '--protocol=TCP'];
  const child = spawn(tools.backup, args, { env: { PATH: process.env.PATH, LANG: 'C.UTF-8', HOME: process.env.HOME }, stdio: ['ignore', 'pipe', 'pipe'] });
  const onAbort = () => child.kill('SIGKILL');
  signal.addEventListener('abort', onAbort, { once: true });
  let tail = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => {
    tail = (tail + text).slice(-16_384);
    const line = found.line ?? POSITION_LINE.exec(tail) ?? undefined;
    if (line && !found.line) {
      found.line = line;
      found.seenAt = new Date();
    }
  });
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve(code));
  });
  exited.catch(() => undefined);
  const what = `mariadb-backup of ${config.host}:${config.port}`;
  try {
    let pending: Buffer | undefined = Buffer.from(`${PHYSICAL_HEADER_PREFIX}${JSON.stringify(header)}\n`, 'utf8');
    for await (const chunk of child.stdout) {
      yield pending ? Buffer.concat([pending, chunk as Buffer]) : (chunk as Buffer);
      pending = undefined;
    }
    const code = await exited;
    if (code !== 0) throw new AdapterError(ORIGIN, signal.aborted ? 'ABORTED' : 'TRANSIENT', `${what} failed (exit ${String(code)}): ${scrub(tail.trim().split('\n').slice(-5).join(' | '), config)}`);
  } catch (error) {
    if (signal.aborted || isAbortError(error)) throw new AdapterError(ORIGIN, 'ABORTED', `${what} was aborted`);
    if (error instanceof AdapterError) throw error;
    throw new AdapterError(ORIGIN, 'TRANSIENT', `${what} failed: ${scrub(tail.trim() || String(error), config)}`, { cause: error });
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'close').catch(() => undefined);
    }
    await options.remove();
    await rm(work, { recursive: true, force: true });
  }
}

/** Starts a physical base and waits for its first byte; `done` carries the coordinates the tool reported. */
export async function startPhysicalBase(config: MysqlSourceConfig, tools: PhysicalTools, signal: AbortSignal): Promise<BaseBackupHandle> {
  const { settings, systemId, databases } = await withConnection(config, async (connection) => {
    const found = await readBinlogSettings(connection);
    return { settings: found, systemId: await serverIdentity(connection, found.serverId), databases: await userDatabases(connection) };
  });
  if (!settings.logBin) {
    throw new AdapterError(ORIGIN, 'CONFIG', `binary logging is off on ${config.host}:${config.port} (log_bin): a point-in-time base backup needs the binary log coordinates of its snapshot`);
  }
  const startedAt = new Date();
  const found: { line?: RegExpExecArray; seenAt?: Date } = {};
  const header: PhysicalHeader = { version: 1, format: 'xbstream', databases };
  const handle = await toDumpHandle(physicalOutput(config, tools, header, found, signal), { origin: ORIGIN, signal, databases, engineVersion: settings.version, extension: '.xbstream' });
  const done = handle.done.then((stats): BaseBackupStats => {
    if (!found.line) throw new AdapterError(ORIGIN, 'TRANSIENT', `mariadb-backup of ${config.host}:${config.port} reported no binary log position: it cannot start a point-in-time restore`);
    const position = formatBinlogPosition(found.line[1]!, Number(found.line[2]));
    const base: BaseBackupInfo = {
      logKind: 'mysql-binlog',
      startPosition: position,
      // Prepared, the copy is consistent at the position commits were blocked at: start and stop are the same.
      stopPosition: position,
      startSegment: found.line[1]!,
      timeline: 1,
      systemId,
      serverVersion: settings.version,
      startedAt,
      consistentAt: found.seenAt ?? new Date(),
    };
    return { ...stats, base };
  });
  done.catch(() => undefined);
  return { ...handle, done };
}
