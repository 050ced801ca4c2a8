// The base of a point-in-time restore when it is physical (physical-base.ts): the xbstream is extracted into a
// private folder, prepared (`mariadb-backup --prepare`: the copy becomes consistent at the base's coordinates), and a
// throwaway `mariadbd` is started on it with no network, no grant checks and no binary log. The one database asked
// for is dumped from it (`--single-transaction`) and that script is loaded like a logical base's; the binary log
// replay that follows is the same as for a logical base. `close()` kills the throwaway server and deletes the folder.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { chmod, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import { promisify } from 'node:util';
import type mysql from 'mysql2/promise';
import { AdapterError, isAbortError } from '@holdfast/sdk';
import type { MysqlSourceConfig } from '../../config.js';
import { ORIGIN } from '../connection.js';
import { splitAt } from '../split-stream.js';
import { startTool } from '../tool-process.js';
import type { ClientTools } from '../tools.js';
import { findPhysicalTools, PHYSICAL_HEADER_PREFIX, type PhysicalHeader, type PhysicalTools } from './physical-base.js';

const run = promisify(execFile);
/** A prepared copy of a large server may need a while for InnoDB to open it. */
const SERVER_READY_WITHIN_MS = 180_000;
/** The flags the ordinary data dump uses, minus connection ones: the script loads into `into` as a logical base's does. */
const DUMP_FLAGS = ['--single-transaction', '--quick', '--routines', '--events', '--triggers', '--hex-blob', '--default-character-set=utf8mb4'];
const isRoot = process.getuid?.() === 0;

/** True when the first line of a base is a physical base's header. */
export function isPhysicalBase(head: Buffer): boolean {
  return head.subarray(0, PHYSICAL_HEADER_PREFIX.length).toString('latin1') === PHYSICAL_HEADER_PREFIX;
}

/** A running throwaway server on the prepared copy. */
export interface PhysicalBase {
  header: PhysicalHeader;
  /** The dump of `name` from the throwaway server, for a client started in the new database. */
  script(): AsyncGenerator<Buffer>;
  /** Kills the throwaway server and deletes the folder; safe to call more than once. */
  close(): Promise<void>;
}

/** Runs a tool to its end; TRANSIENT with its last output lines when it exits non-zero. */
async function runStep(command: string, args: string[], signal: AbortSignal, what: string, input?: Readable): Promise<void> {
  const child = spawn(command, args, { stdio: [input ? 'pipe' : 'ignore', 'ignore', 'pipe'], signal, killSignal: 'SIGKILL', env: { PATH: process.env.PATH, LANG: 'C.UTF-8' } });
  let tail = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (text: string) => (tail = (tail + text).slice(-4096)));
  const closed = once(child, 'close') as Promise<[number | null]>;
  try {
    if (input) await pipeline(input, child.stdin!);
    const [code] = await closed;
    if (code !== 0) throw new AdapterError(ORIGIN, 'TRANSIENT', `${what} failed (exit ${String(code)}): ${tail.trim().split('\n').slice(-3).join(' | ')}`);
  } catch (error) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await closed.catch(() => undefined);
    if (signal.aborted || isAbortError(error)) throw new AdapterError(ORIGIN, 'ABORTED', `${what} was aborted`);
    if (error instanceof AdapterError) throw error;
    throw new AdapterError(ORIGIN, 'TRANSIENT', `${what} failed: ${tail.trim() || (error as Error).message}`, { cause: error });
  }
}

/** Waits until the throwaway server answers a query on its socket; rejects when it exits first. */
async function waitForServer(server: ChildProcess, socket: string, errorLog: string, signal: AbortSignal): Promise<void> {
  const deadline = Date.now() + SERVER_READY_WITHIN_MS;
  for (;;) {
    if (signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', 'the point-in-time restore was aborted');
    if (server.exitCode !== null || server.signalCode !== null) {
      const log = await readFile(errorLog, 'utf8').catch(() => '');
      throw new AdapterError(ORIGIN, 'TRANSIENT', `the throwaway MariaDB server on the prepared base exited (${String(server.exitCode ?? server.signalCode)}): ${log.trim().split('\n').slice(-4).join(' | ')}`);
    }
    const connection = await connectToCopy(socket).catch(() => undefined);
    if (connection) {
      await connection.end().catch(() => undefined);
      return;
    }
    if (Date.now() > deadline) throw new AdapterError(ORIGIN, 'TRANSIENT', `the throwaway MariaDB server on the prepared base did not answer within ${SERVER_READY_WITHIN_MS / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/**
 * A root session on the throwaway server's socket. The driver loads here, not with the module: discovering the
 * adapters must not load mysql2 (apps/server/test/lazy-drivers.test.ts), as connection.ts does for the source itself.
 */
async function connectToCopy(socket: string): Promise<mysql.Connection> {
  const { default: driver } = await import('mysql2/promise');
  return driver.createConnection({ socketPath: socket, user: 'root' });
}

async function serverDatabases(socket: string): Promise<string[]> {
  const connection = await connectToCopy(socket);
  try {
    const [rows] = await connection.query<mysql.RowDataPacket[]>('SHOW DATABASES');
    return rows.map((row) => String(Object.values(row)[0]));
  } finally {
    await connection.end().catch(() => undefined);
  }
}

/**
 * Reads the physical base (header line, then xbstream) into a private folder, prepares it, starts the throwaway
 * server and checks it holds `name` (CONFIG otherwise). Everything is cleaned up when any step fails.
 */
export async function openPhysicalBase(config: MysqlSourceConfig, clientTools: ClientTools, stream: Readable, name: string, signal: AbortSignal): Promise<PhysicalBase> {
  const first = await splitAt(stream, Buffer.from('\n'), 64 * 1024);
  const header = JSON.parse(first.head.subarray(PHYSICAL_HEADER_PREFIX.length).toString('utf8')) as PhysicalHeader;
  if (header.version !== 1 || header.format !== 'xbstream') throw new AdapterError(ORIGIN, 'CONFIG', `unsupported physical base (version ${String(header.version)}, format ${String(header.format)})`);
  // The header lists the user databases as the backup started: one it does not name is refused before any work.
  if (!header.databases.includes(name)) {
    first.rest.destroy();
    throw new AdapterError(ORIGIN, 'CONFIG', `the base backup holds no database "${name}" (it holds ${header.databases.map((database) => `"${database}"`).join(', ')})`);
  }
  const found = await findPhysicalTools(config);
  if (!found.tools) {
    first.rest.destroy();
    throw new AdapterError(ORIGIN, 'CONFIG', `the base backup is physical (mariadb-backup), and restoring it needs ${found.missing.join(', ')}, not found ${config.binDirectory ? `in ${config.binDirectory}` : 'on PATH'}: install mariadb-backup and mariadb-server on the Holdfast host`);
  }
  const tools: PhysicalTools = found.tools;
  // 0700, and owned by the server's OS user when root starts it as `mysql`: nobody else reads the copy.
  const folder = await mkdtemp(path.join(tmpdir(), 'holdfast-mariadb-physical-'));
  await chmod(folder, 0o700);
  const data = path.join(folder, 'data');
  const socket = path.join(folder, 'server.sock');
  const errorLog = path.join(folder, 'error.log');
  let server: ChildProcess | undefined;
  let isClosed = false;
  const close = async () => {
    if (isClosed) return;
    isClosed = true;
    if (server && server.exitCode === null && server.signalCode === null) {
      // The copy is thrown away: no clean shutdown needed.
      const closed = once(server, 'close');
      server.kill('SIGKILL');
      await closed.catch(() => undefined);
    }
    await rm(folder, { recursive: true, force: true });
  };
  try {
    await mkdir(data, { mode: 0o700 });
    await runStep(tools.mbstream, ['-x', '-C', data], signal, 'extracting the physical base (mbstream -x)', first.rest);
    await runStep(tools.backup, ['--prepare', `--target-dir=${data}`], signal, 'preparing the physical base (mariadb-backup --prepare)');
    if (isRoot) {
      await run('chown', ['-R', 'mysql:mysql', folder]).catch((error: unknown) => {
        throw new AdapterError(ORIGIN, 'CONFIG', `the prepared copy cannot be handed to the OS user mysql the throwaway server runs as (Holdfast runs as root): ${(error as Error).message.trim()}`, { cause: error });
      });
    }
    const args = [
      '--no-defaults',
      `--datadir=${data}`,
      `--socket=${socket}`,
      `--pid-file=${path.join(folder, 'server.pid')}`,
      `--log-error=${errorLog}`,
      `--tmpdir=${folder}`,
      '--skip-networking',
      '--skip-grant-tables',
      '--skip-log-bin',
      '--skip-slave-start',
      '--event-scheduler=OFF',
      '--innodb-buffer-pool-size=64M',
      ...(isRoot ? ['--user=mysql'] : []),
    ];
    server = spawn(tools.server, args, { stdio: 'ignore', env: { PATH: process.env.PATH, LANG: 'C.UTF-8' } });
    server.once('error', () => undefined);
    await waitForServer(server, socket, errorLog, signal);
    const databases = await serverDatabases(socket);
    if (!databases.includes(name)) {
      const held = databases.filter((database) => !['information_schema', 'performance_schema', 'mysql', 'sys'].includes(database));
      throw new AdapterError(ORIGIN, 'CONFIG', `the base backup holds no database "${name}" (it holds ${held.map((database) => `"${database}"`).join(', ')})`);
    }
  } catch (error) {
    first.rest.destroy();
    await close();
    throw error;
  }
  async function* script(): AsyncGenerator<Buffer> {
    const args = ['--no-defaults', `--socket=${socket}`, '--user=root', ...DUMP_FLAGS, '--', name];
    const tool = await startTool(config, undefined, clientTools.dump, args, signal);
    try {
      for await (const chunk of tool.stdout) yield chunk as Buffer;
      const code = await tool.exited;
      if (code !== 0) throw new AdapterError(ORIGIN, 'TRANSIENT', `the dump of "${name}" from the prepared physical base failed (exit ${String(code)}): ${tool.stderrTail()}`);
    } finally {
      await tool.stop();
    }
  }
  return { header, script, close };
}
