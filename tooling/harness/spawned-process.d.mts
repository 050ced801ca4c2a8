import type { ChildProcess } from 'node:child_process';

/** A spawned node process with its output collected line by line. */
export interface SpawnedProcess {
  child: ChildProcess;
  stdoutLines: string[];
  stderr(): string;
  /** Resolves the first stdout JSON log line whose `msg` equals `message`. */
  waitForLog(message: string, timeoutMs?: number): Promise<Record<string, unknown>>;
  /** Resolves the exit code and signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Runs `node <script> ...args` with exactly `env`, collecting stdout lines (pino JSON logs) and stderr. */
export function spawnNode(script: string, args: string[], env: NodeJS.ProcessEnv): SpawnedProcess;
