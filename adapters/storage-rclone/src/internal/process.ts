import { spawn, type ChildProcess } from 'node:child_process';
import { AdapterError } from '@holdfast/sdk';
import { RCLONE_ORIGIN, aborted, exitError, type RcloneExit } from './errors.js';
import type { RcloneSession } from './session.js';

/** stderr kept per run: rclone's error is on its last lines. */
const STDERR_TAIL = 16 * 1024;
/** How long a terminated rclone gets to exit before SIGKILL. */
const KILL_GRACE_MS = 2_000;

/** A running rclone command. */
export interface RcloneRun {
  child: ChildProcess;
  /** Resolves when the process has exited (never rejects; a spawn failure rejects with a CONFIG error). */
  exited: Promise<RcloneExit>;
  /** Terminates the process (SIGTERM, then SIGKILL) and waits for it. */
  stop(): Promise<RcloneExit>;
}

/** Starts `rclone <baseArgs> <args>`; stdin is a pipe when `withStdin`. An abort of `signal` stops it. */
export function startRclone(session: RcloneSession, args: string[], options: { withStdin?: boolean; signal?: AbortSignal } = {}): RcloneRun {
  const child = spawn('rclone', [...session.baseArgs, ...args], {
    env: session.env,
    stdio: [options.withStdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-STDERR_TAIL);
  });
  const exited = new Promise<RcloneExit>((resolve, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) => {
      const reason = error.code === 'ENOENT' ? 'the rclone binary is not installed (apt install rclone)' : `cannot start rclone: ${error.message}`;
      reject(new AdapterError(RCLONE_ORIGIN, 'CONFIG', reason));
    });
    child.once('close', (code, signal) => resolve({ code, signal, stderr }));
  });
  exited.catch(() => undefined);
  const stop = async (): Promise<RcloneExit> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    }
    return exited;
  };
  const onAbort = () => void stop();
  options.signal?.addEventListener('abort', onAbort, { once: true });
  void exited.finally(() => options.signal?.removeEventListener('abort', onAbort)).catch(() => undefined);
  return { child, exited, stop };
}

/** Runs an rclone command to its end and resolves its stdout; a non-zero exit rejects with a mapped AdapterError. */
export async function runRclone(session: RcloneSession, args: string[], what: string, signal?: AbortSignal): Promise<string> {
  signal?.throwIfAborted();
  const run = startRclone(session, args, { signal });
  const chunks: Buffer[] = [];
  run.child.stdout?.on('data', (chunk: Buffer) => chunks.push(chunk));
  const exit = await run.exited;
  if (signal?.aborted) throw aborted(what);
  if (exit.code !== 0) throw exitError(exit, what, session.secrets);
  return Buffer.concat(chunks).toString('utf8');
}

/** Runs an rclone command and resolves how it ended, whatever the exit code. */
export async function tryRclone(session: RcloneSession, args: string[]): Promise<RcloneExit> {
  return startRclone(session, args).exited;
}
