import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { AdapterError, sshConnectError, startRemoteCommand, type RemoteProcess, type SshTarget } from '@holdfast/sdk';
import { ORIGIN } from './connection.js';

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
}

/** Starts a client tool. The signal kills it; a missing binary becomes a CONFIG error. */
export function startTool(command: string, args: string[], extraEnv: NodeJS.ProcessEnv, signal: AbortSignal): ToolProcess {
  // Only PATH and a UTF-8 locale reach the tool: nothing of Holdfast's own environment leaks into it.
  const env = { PATH: process.env.PATH, LANG: 'C.UTF-8', HOME: process.env.HOME, ...extraEnv };
  const child = spawn(command, args, { env, signal, stdio: ['pipe', 'pipe', 'pipe'], killSignal: 'SIGKILL' });
  const stderrTail = captureTail(child.stderr);
  const exited = new Promise<number | null>((resolve, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') {
        reject(new AdapterError(ORIGIN, 'CONFIG', `${command} was not found; install redis-tools or set binDirectory`));
      } else if (error.name === 'AbortError') {
        reject(new AdapterError(ORIGIN, 'ABORTED', `${command} was aborted`));
      } else {
        reject(error);
      }
    });
    child.once('close', (code) => resolve(code));
  });
  exited.catch(() => undefined);
  // A tool that dies early closes its stdin; writing into it then raises EPIPE, which the exit code reports instead.
  child.stdin.on('error', () => undefined);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await once(child, 'close').catch(() => undefined);
    }
  };
  return { stdout: child.stdout, stdin: child.stdin, stderrTail, exited, stop };
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
 * Starts a tool over SSH. `secretEnv` (the password) reaches it through the SDK's 0600 remote file, never argv; the
 * signal kills the remote process. A tool missing on the remote host exits 127, reported as CONFIG.
 */
export async function startRemoteTool(
  ssh: SshTarget,
  command: string,
  args: string[],
  secretEnv: Record<string, string>,
  signal: AbortSignal,
): Promise<ToolProcess> {
  const remote = await startRemoteCommand(ssh, { command, args, secretEnv: { LANG: 'C.UTF-8', ...secretEnv }, signal }).catch((error: unknown) => {
    throw sshConnectError(ORIGIN, error);
  });
  const exited = remote.exited.then((code) => {
    if (code === 127) throw new AdapterError(ORIGIN, 'CONFIG', `${command} was not found on ${ssh.host}; install redis-tools there or set binDirectory`);
    return code;
  });
  exited.catch(() => undefined);
  return { stdout: remote.stdout, stdin: remote.stdin, stderrTail: remote.stderrTail, exited, stop: stopRemote(remote, signal) };
}
