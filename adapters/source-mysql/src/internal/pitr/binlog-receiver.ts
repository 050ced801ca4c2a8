// One run of `mariadb-binlog --read-from-remote-server --raw --stop-never` into the spool, and what its exit means.
// The stream restarts it itself after every exit, so it can look at the server's binary logs between runs (resume
// with the right file, report a purged one) instead of the tool retrying blindly.
import { spawn } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import type { MysqlSourceConfig } from '../../config.js';
import { scrub } from '../connection.js';
import { writeOptionsFile } from '../tools.js';
import { binlogConnectionArgs, type BinlogTool } from './binlog-tool.js';

/** The password's option file goes once the tool surely read it (it reads its options before connecting). */
const OPTIONS_FILE_LIFETIME_MS = 5000;

export interface ReceiverRun {
  pid: number | undefined;
  /** Resolves with the exit code (null when killed) and the end of stderr. */
  exited: Promise<{ code: number | null; stderr: string }>;
  /** Asks the tool to stop (SIGTERM); the file being written is fetched again from its start by the next run. */
  terminate(): void;
}

/**
 * Starts the reader at the beginning of `firstLog`; with --stop-never it follows the server into every newer file
 * (`--to-last-log`) and waits for new events, writing each file under its server name into `spoolDir`. The replica
 * server id is the stream's own, so the server drops an earlier connection of the same stream (a reader left running
 * by a process that died) when this one registers.
 */
export async function startBinlogReceiver(config: MysqlSourceConfig, tool: BinlogTool, spoolDir: string, firstLog: string, replicaServerId: number): Promise<ReceiverRun> {
  const options = await writeOptionsFile(config);
  const args = [
    ...options.args,
    ...binlogConnectionArgs(config, tool),
    '--read-from-remote-server',
    '--raw',
    '--stop-never',
    `--stop-never-slave-server-id=${replicaServerId}`,
    `--result-file=${spoolDir}/`,
    firstLog,
  ];
  const child = spawn(tool.command, args, { cwd: spoolDir, env: { PATH: process.env.PATH, LANG: 'C.UTF-8' }, stdio: ['ignore', 'ignore', 'pipe'] });
  const forget = setTimeout(() => void options.remove(), OPTIONS_FILE_LIFETIME_MS);
  forget.unref();
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text: string) => (stderr = (stderr + text).slice(-8000)));
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => {
    child.once('error', (error) => resolve({ code: null, stderr: `${stderr}\n${error.message}` }));
    child.once('close', (code) => resolve({ code, stderr }));
  }).finally(async () => {
    clearTimeout(forget);
    await options.remove();
  });
  return { pid: child.pid, exited, terminate: () => void child.kill('SIGTERM') };
}

/** Why the reader stopped, from its stderr. */
export type ReceiverExitKind =
  /** Wrong password, or the account may not read the binary log: retrying cannot help. */
  | 'refused'
  /** The server no longer has the file asked for (purged meanwhile): the next start reports the gap. */
  | 'log-missing'
  /** Anything else (server restart, network): retry with backoff. */
  | 'transient';

export function classifyReceiverExit(stderr: string): ReceiverExitKind {
  if (/Access denied|REPLICATION SLAVE privilege/i.test(stderr)) return 'refused';
  if (/Could not find first log file name|binary log (file )?.*not found|log event entry exceeded|1236/i.test(stderr)) return 'log-missing';
  return 'transient';
}

/** The last error lines of the reader, without the password, for messages. */
export function receiverError(config: MysqlSourceConfig, stderr: string): string {
  const lines = stderr.split('\n').filter((line) => line.trim() !== '');
  return scrub(lines.slice(-2).join(' ').trim() || 'no message', config);
}

/**
 * Stops a reader an earlier run of this stream left behind (the Holdfast process died with SIGKILL and the tool kept
 * writing into the spool): only a process whose command line names this spool, so nothing else is ever signalled.
 */
export async function stopLeftoverReceiver(pid: number | undefined, spoolDir: string): Promise<boolean> {
  if (!pid || pid <= 1) return false;
  let commandLine: string;
  try {
    commandLine = await readFile(`/proc/${pid}/cmdline`, 'utf8');
  } catch {
    return false; // gone
  }
  if (!commandLine.split('\0').includes(`--result-file=${spoolDir}/`)) return false;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return false;
  }
  for (let i = 0; i < 50; i++) {
    try {
      await readFile(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      return true;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return true;
}
