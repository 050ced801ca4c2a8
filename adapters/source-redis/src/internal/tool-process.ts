import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { AdapterError } from '@holdfast/sdk';
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

/** A started tool process with its stderr tail and exit promise. */
export interface ToolProcess {
  child: ChildProcess;
  stdout: Readable;
  stdin: Writable;
  stderrTail: () => string;
  /** Resolves with the exit code (null when killed). */
  exited: Promise<number | null>;
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
  child.stdin?.on('error', () => undefined);
  return { child, stdout: child.stdout!, stdin: child.stdin!, stderrTail, exited };
}

/** Kills a tool that is still running and waits for it to be gone. */
export async function stopTool(tool: ToolProcess): Promise<void> {
  if (tool.child.exitCode === null && tool.child.signalCode === null) {
    tool.child.kill('SIGKILL');
    await once(tool.child, 'close').catch(() => undefined);
  }
}
