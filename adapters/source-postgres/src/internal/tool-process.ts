import { spawn } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { AdapterError, sshConnectError, startRemoteCommand, type RemoteProcess, type SshTarget } from '@holdfast/sdk';
import type { PostgresSourceConfig } from '../config.js';
import { ORIGIN, toolEnvironment } from './connection.js';

/** Keeps the last few KiB of a tool's stderr for error messages. */
function captureTail(stream: Readable | null, limit = 8192): () => string {
  let tail = '';
  stream?.setEncoding('utf8');
  stream?.on('data', (text: string) => {
    tail = (tail + text).slice(-limit);
  });
  return () => tail.trim();
}

/** A started tool process (local child or remote command) with its stderr tail and exit promise. */
export interface ToolProcess {
  stdout: Readable;
  stdin: Writable;
  stderrTail: () => string;
  /** Resolves with the exit code (null when killed). */
  exited: Promise<number | null>;
  /** Kills the tool if it still runs and waits for it to be gone. */
  stop(): Promise<void>;
  /**
   * Local tools only: asks the tool to finish (SIGTERM, which pg_receivewal handles by closing its files cleanly),
   * then kills it after `graceMs`; resolves once it is gone.
   */
  terminate?(graceMs?: number): Promise<void>;
  /** Local tools only: every piece of stderr as it arrives (besides the tail), for tools that report progress there. */
  onStderr?(listener: (text: string) => void): void;
}

/** The PostgreSQL tools this adapter runs. */
export type PgTool = 'pg_dump' | 'pg_dumpall' | 'pg_restore' | 'psql' | 'pg_basebackup' | 'pg_receivewal';

/** Starts a tool on the Holdfast host. The signal kills it; a missing binary becomes a CONFIG error. */
function startLocal(command: string, args: string[], env: NodeJS.ProcessEnv, signal: AbortSignal): ToolProcess {
  const child = spawn(command, args, { env, signal, stdio: ['pipe', 'pipe', 'pipe'], killSignal: 'SIGTERM' });
  const stderrTail = captureTail(child.stderr);
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') {
        reject(new AdapterError(ORIGIN, 'CONFIG', `${command} was not found; install the PostgreSQL client tools or set binDirectory`));
      } else if (error.name === 'AbortError') {
        reject(new AdapterError(ORIGIN, 'ABORTED', `${command} was aborted`));
      } else {
        reject(error);
      }
    });
    child.once('close', (code) => resolve(code));
  });
  exited.catch(() => undefined);
  child.stdin.on('error', () => undefined);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'close').catch(() => undefined);
    }
  };
  const terminate = async (graceMs = 10_000) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const closed = once(child, 'close').catch(() => undefined);
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await closed;
    clearTimeout(timer);
  };
  const onStderr = (listener: (text: string) => void) => child.stderr.on('data', listener);
  return { stdout: child.stdout, stdin: child.stdin, stderrTail, exited, stop, terminate, onStderr };
}

/**
 * Stops a remote tool once. When the signal aborted, the SDK already kills it (its own abort listener): a second,
 * concurrent kill() can wait forever on a helper channel of the closing connection, so it is skipped; a tool that
 * exited needs nothing; otherwise the kill is bounded.
 */
function stopRemote(remote: RemoteProcess, signal: AbortSignal): () => Promise<void> {
  let isExited = false;
  void remote.exited.then(() => (isExited = true));
  return async () => {
    if (isExited) return;
    if (signal.aborted) {
      await Promise.race([remote.exited, new Promise((resolve) => setTimeout(resolve, 5000).unref())]);
      return;
    }
    await Promise.race([remote.kill(), new Promise((resolve) => setTimeout(resolve, 10_000).unref())]);
  };
}

/**
 * Starts a tool over SSH. The environment (password included) travels in the SDK's 0600 remote file, never argv;
 * the signal kills the remote process. A tool missing on the remote host exits 127, reported as CONFIG.
 */
async function startRemote(ssh: SshTarget, command: string, args: string[], env: NodeJS.ProcessEnv, signal: AbortSignal): Promise<ToolProcess> {
  const { PATH: _path, ...rest } = env;
  const secretEnv = Object.fromEntries(Object.entries(rest).filter((entry): entry is [string, string] => entry[1] !== undefined));
  const remote = await startRemoteCommand(ssh, { command, args, secretEnv, signal }).catch((error: unknown) => {
    throw sshConnectError(ORIGIN, error);
  });
  const exited = remote.exited.then((code) => {
    if (code === 127) {
      throw new AdapterError(ORIGIN, 'CONFIG', `${command} was not found on ${ssh.host}; install the PostgreSQL client tools there or set binDirectory`);
    }
    return code;
  });
  exited.catch(() => undefined);
  return { stdout: remote.stdout, stdin: remote.stdin, stderrTail: remote.stderrTail, exited, stop: stopRemote(remote, signal) };
}

/** Starts `tool` where the config says: on the Holdfast host, or over SSH when `ssh` is given. */
export async function startTool(
  config: PostgresSourceConfig,
  ssh: SshTarget | undefined,
  tool: PgTool,
  args: string[],
  signal: AbortSignal,
): Promise<ToolProcess> {
  const env = toolEnvironment(config);
  if (!ssh) return startLocal(config.binDirectory ? path.join(config.binDirectory, tool) : tool, args, env, signal);
  return startRemote(ssh, config.binDirectory ? path.posix.join(config.binDirectory, tool) : tool, args, env, signal);
}
