import { spawn, type ChildProcess } from 'node:child_process';
import { AdapterError } from '@holdfast/sdk';
import { RSYNC_ORIGIN } from './errors.js';

/** How long a terminated rsync gets to exit before SIGKILL. */
const KILL_GRACE_MS = 2_000;

/** A running local rsync client. */
export interface RsyncRun {
  child: ChildProcess;
  /** Exit code (null when killed) and the tail of stderr; rejects only when rsync cannot start. */
  exited: Promise<{ code: number | null; stderr: string }>;
  /** SIGTERM, then SIGKILL after a grace period; resolves once it exited. */
  stop(): Promise<void>;
}

/**
 * Starts the local rsync client. The daemon password goes in RSYNC_PASSWORD, never on the command line; the
 * environment is otherwise minimal, so none of Holdfast's own variables reach rsync. An abort of `signal` stops it.
 */
export function startRsync(args: string[], password: string | undefined, signal?: AbortSignal): RsyncRun {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', LANG: 'C.UTF-8', TZ: 'UTC0' };
  if (password !== undefined) env.RSYNC_PASSWORD = password;
  // stdin 'ignore': rsync must not prompt for a password, nor take a socket on stdin for an inetd connection.
  const child = spawn('rsync', args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-16_384)));
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    child.once('error', (error: NodeJS.ErrnoException) =>
      reject(new AdapterError(RSYNC_ORIGIN, 'CONFIG', error.code === 'ENOENT' ? 'the rsync binary is not installed here (apt install rsync)' : `cannot start rsync: ${error.message}`)),
    );
    child.once('close', (code) => resolve({ code, stderr }));
  });
  exited.catch(() => undefined);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS);
      await exited.catch(() => undefined);
      clearTimeout(timer);
    }
  };
  const onAbort = () => void stop();
  signal?.addEventListener('abort', onAbort, { once: true });
  void exited.finally(() => signal?.removeEventListener('abort', onAbort)).catch(() => undefined);
  return { child, exited, stop };
}
