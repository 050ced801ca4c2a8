import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { open, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { AdapterError } from '@holdfast/sdk';
import { ORIGIN } from '../connection.js';
import { asServerUser, handOver, type ServerUser } from './restore-owner.js';
import type { ServerBinaries } from './restore-preflight.js';

const run = promisify(execFile);

/** Log file of the recovery run, inside the data directory (it stays there for reading). */
export const RESTORE_LOG = 'holdfast-restore.log';

/** How the restored server is started: always a private Unix socket, TCP on 127.0.0.1 only when it is served. */
export interface RecoveryServer {
  binaries: ServerBinaries;
  user: ServerUser;
  dataDir: string;
  /** Private folder (0700, the server user's) holding the Unix socket and the restore-only pg_hba.conf. */
  runDir: string;
  port: number;
  isServed: boolean;
}

function shellQuoted(word: string): string {
  return `'${word.replaceAll("'", "'\\''")}'`;
}

/**
 * Options given on the command line, which win over every configuration file: the copy listens where we say, logs
 * in English to our log file with UTC times (the log is how the recovered point is read), takes no connections until
 * recovery is over (hot_standby off: no check of the source's max_connections and friends against this host's
 * settings), uses its own pg_hba.conf (trust on the private socket only), and leaves out TLS and archiving the source
 * may have set up with files that did not travel with the base.
 */
function serverOptions(server: RecoveryServer): string {
  const hba = path.join(server.runDir, 'pg_hba.conf');
  const settings: Record<string, string> = {
    data_directory: server.dataDir,
    hba_file: hba,
    ident_file: path.join(server.runDir, 'pg_ident.conf'),
    port: String(server.port),
    listen_addresses: server.isServed ? '127.0.0.1' : '',
    unix_socket_directories: server.runDir,
    hot_standby: 'off',
    logging_collector: 'off',
    log_destination: 'stderr',
    lc_messages: 'C',
    log_timezone: 'UTC',
    // %b names the process: a client's FATAL (a login refused while recovering) is not a failure of the recovery.
    log_line_prefix: '%m [%p] %b: ',
    ssl: 'off',
    archive_mode: 'off',
  };
  return Object.entries(settings)
    .map(([name, value]) => `-c ${shellQuoted(`${name}=${value}`)}`)
    .join(' ');
}

async function pgCtl(server: RecoveryServer, args: string[], timeoutMs: number): Promise<void> {
  const [command, argv] = asServerUser(server.user, server.binaries.pgCtl, ['-D', server.dataDir, ...args]);
  await run(command, argv, { timeout: timeoutMs, env: { PATH: process.env.PATH, LANG: 'C.UTF-8', LC_MESSAGES: 'C' } });
}

/** Writes the restore-only auth files and starts the server in the background (pg_ctl -W: we watch the log). */
export async function startRecoveryServer(server: RecoveryServer): Promise<void> {
  const hbaLines = ['# Written by Holdfast for the restore run: the socket folder is private to the server user.', 'local all all trust'];
  // md5 also accepts roles whose password is stored as SCRAM (it then runs SCRAM), so every source role can log in.
  if (server.isServed) hbaLines.push('host all all 127.0.0.1/32 md5');
  await writeFile(path.join(server.runDir, 'pg_hba.conf'), `${hbaLines.join('\n')}\n`, { mode: 0o600 });
  await writeFile(path.join(server.runDir, 'pg_ident.conf'), '', { mode: 0o600 });
  await handOver(server.user, server.runDir);
  try {
    await pgCtl(server, ['-l', path.join(server.dataDir, RESTORE_LOG), '-W', '-o', serverOptions(server), 'start'], 60_000);
  } catch (error) {
    const detail = (error as { stderr?: string }).stderr?.trim() || (error as Error).message;
    throw new AdapterError(ORIGIN, 'TRANSIENT', `cannot start the restored PostgreSQL server: ${detail}`, { cause: error });
  }
  // pg_ctl -W returns before the postmaster wrote postmaster.pid; until it has, a stop (on abort) would find nothing
  // to stop. A server that fails at once never writes it: its FATAL is in the log, which awaitPromotion reads.
  for (let waited = 0; waited < 10_000 && !existsSync(path.join(server.dataDir, 'postmaster.pid')); waited += 50) await sleep(50);
}

/** Stops the server: `fast` for a clean shutdown after success, `immediate` when giving up. */
export async function stopRecoveryServer(server: RecoveryServer, mode: 'fast' | 'immediate'): Promise<void> {
  if (!existsSync(path.join(server.dataDir, 'postmaster.pid'))) return;
  await pgCtl(server, ['-m', mode, '-w', '-t', '120', 'stop'], 130_000);
}

/** What the recovery log said about the end of replay. */
export interface RecoveryOutcome {
  /** "last completed transaction was at log time …": the newest commit (or abort) the copy replayed. */
  lastTransactionAt?: Date;
  /** "recovery stopping before/after commit of transaction N, time …", when a target stopped replay. */
  stoppedAt?: string;
  segmentsReplayed: number;
}

/** `2026-12-06 04:30:00.123456+00` (log_timezone UTC) as a Date (milliseconds kept). */
function logTime(text: string): Date | undefined {
  const match = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)([+-]\d\d)(?::?(\d\d))?/.exec(text.trim());
  if (!match) return undefined;
  const time = new Date(`${match[1]}T${match[2]}${match[3]}:${match[4] ?? '00'}`);
  return Number.isNaN(time.getTime()) ? undefined : time;
}

/**
 * Follows the recovery log until the server has promoted ("database system is ready to accept connections", which
 * with hot_standby off is only said once recovery is over) or failed (a FATAL or PANIC line, e.g. "recovery ended
 * before configured recovery target was reached", or the server exiting). Reports each replayed segment.
 */
export async function awaitPromotion(server: RecoveryServer, signal: AbortSignal, onProgress: (message: string) => void): Promise<RecoveryOutcome> {
  const logFile = path.join(server.dataDir, RESTORE_LOG);
  const outcome: RecoveryOutcome = { segmentsReplayed: 0 };
  let offset = 0;
  let pending = '';
  let quietPolls = 0;
  for (;;) {
    if (signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', 'the point-in-time restore was aborted during recovery');
    const handle = await open(logFile, 'r').catch(() => null);
    if (handle) {
      try {
        const { size } = await handle.stat();
        if (size > offset) {
          const { buffer, bytesRead } = await handle.read(Buffer.alloc(size - offset), 0, size - offset, offset);
          offset += bytesRead;
          pending += buffer.subarray(0, bytesRead).toString('utf8');
        }
      } finally {
        await handle.close();
      }
    }
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const failure = /\b(?:FATAL|PANIC):\s+(.*)$/.exec(line);
      if (failure && !line.includes('client backend:')) throw new AdapterError(ORIGIN, 'TRANSIENT', `the restored server stopped: ${failure[1]!.trim()} (log: ${logFile})`);
      const restored = /restored log file "([0-9A-F]{24})" from archive/.exec(line);
      if (restored) {
        outcome.segmentsReplayed += 1;
        onProgress(`replayed WAL segment ${restored[1]} (${outcome.segmentsReplayed})`);
      }
      const stopping = /(recovery stopping (?:before|after) .*)$/.exec(line);
      if (stopping) outcome.stoppedAt = stopping[1];
      const last = /last completed transaction was at log time (.+)$/.exec(line);
      if (last) outcome.lastTransactionAt = logTime(last[1]!);
      if (/database system is ready to accept connections/.test(line)) return outcome;
    }
    // The server writes postmaster.pid while it runs; gone for two polls in a row without a FATAL means it exited.
    quietPolls = existsSync(path.join(server.dataDir, 'postmaster.pid')) ? 0 : quietPolls + 1;
    if (quietPolls >= 3) {
      throw new AdapterError(ORIGIN, 'TRANSIENT', `the restored server exited during recovery; see ${logFile}${pending ? `: ${pending.trim()}` : ''}`);
    }
    await sleep(200, undefined, { signal }).catch(() => undefined);
  }
}
