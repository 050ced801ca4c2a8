import { spawn, type ChildProcess } from 'node:child_process';
import { AdapterError } from '@holdfast/sdk';
import type { SmbStorageConfig } from '../config.js';
import { SMB_ORIGIN, type SmbStatus } from './errors.js';

/** What a finished smbclient run printed. */
export interface SmbRun {
  /** Everything smbclient printed: with `-E` its answers (`ls`, `allinfo`) and errors all go to stderr. */
  messages: string;
  exitCode: number | null;
  /** NT statuses it reported, in order. */
  statuses: SmbStatus[];
}

/** How a run is wired: stdin fed by the caller (`put -`), stdout read by the caller (`get … -`). */
export interface SpawnOptions {
  hasInput?: boolean;
  hasDataOut?: boolean;
}

const STATUS = /NT_STATUS_[A-Z0-9_]+/;

/** Every NT status in smbclient's output, with its line. */
export function statusesIn(output: string): SmbStatus[] {
  const statuses: SmbStatus[] = [];
  for (const line of output.split('\n')) {
    const match = STATUS.exec(line);
    if (match) statuses.push({ status: match[0], line: line.trim() });
  }
  return statuses;
}

/**
 * Runs smbclient against the configured share with `commands` (joined for `-c`). The password travels in the
 * child's environment (`PASSWD`), never in its arguments, where `ps` would show it. `TZ=UTC` makes `ls` print UTC.
 */
export class Smbclient {
  private readonly running = new Set<ChildProcess>();

  constructor(private readonly config: SmbStorageConfig) {}

  /** `//host/share` and port, for messages. */
  get where(): string {
    return `//${this.config.host}:${this.config.port}/${this.config.share}`;
  }

  /** Starts smbclient; with `commands` it runs them (`-c`) and exits, without it reads commands from stdin. */
  spawn(commands: string[] | undefined, options: SpawnOptions = {}): ChildProcess {
    const args = [`//${this.config.host}/${this.config.share}`, '-p', String(this.config.port), '-t', String(this.config.timeoutSeconds), '-E'];
    args.push('-U', this.config.username);
    if (this.config.domain) args.push('-W', this.config.domain);
    if (this.config.password === '') args.push('-N');
    if (this.config.protection !== 'default') args.push(`--client-protection=${this.config.protection}`);
    if (commands) args.push('-c', commands.join('; '));
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH ?? '/usr/bin:/bin', TZ: 'UTC', LANG: 'C.UTF-8', LC_ALL: 'C.UTF-8' };
    if (this.config.password !== '') env.PASSWD = this.config.password;
    const child = spawn('smbclient', args, {
      env,
      // With -E every message goes to stderr, so stdout carries nothing but the bytes of a `get … -`.
      stdio: [options.hasInput || !commands ? 'pipe' : 'ignore', options.hasDataOut ? 'pipe' : 'ignore', 'pipe'],
    });
    this.running.add(child);
    child.once('close', () => this.running.delete(child));
    return child;
  }

  /** Collects stdout and stderr of a child and resolves when it exits; rejects when smbclient cannot be started. */
  finished(child: ChildProcess): Promise<SmbRun> {
    let messages = '';
    child.stderr?.setEncoding('utf8').on('data', (text: string) => (messages += text));
    return new Promise((resolve, reject) => {
      child.once('error', (error: NodeJS.ErrnoException) => {
        if (error.code === 'ENOENT') {
          reject(new AdapterError(SMB_ORIGIN, 'CONFIG', 'smbclient is not installed on the Holdfast host (Debian/Ubuntu: apt install smbclient)'));
        } else reject(error);
      });
      child.once('close', (exitCode) => resolve({ messages, exitCode, statuses: statusesIn(messages) }));
    });
  }

  /** Runs commands to completion; an abort kills smbclient. */
  async run(commands: string[], signal?: AbortSignal): Promise<SmbRun> {
    signal?.throwIfAborted();
    const child = this.spawn(commands);
    const kill = () => child.kill('SIGKILL');
    signal?.addEventListener('abort', kill, { once: true });
    try {
      const result = await this.finished(child);
      signal?.throwIfAborted();
      return result;
    } finally {
      signal?.removeEventListener('abort', kill);
    }
  }

  /** Kills every smbclient this instance still runs. */
  killAll(): void {
    for (const child of this.running) child.kill('SIGKILL');
  }
}
