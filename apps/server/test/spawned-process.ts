import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';

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

export function spawnNode(script: string, args: string[], env: NodeJS.ProcessEnv): SpawnedProcess {
  const child = spawn(process.execPath, [script, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const stdoutLines: string[] = [];
  let stderrText = '';
  const waiters: Array<() => void> = [];
  createInterface({ input: child.stdout! }).on('line', (line) => {
    stdoutLines.push(line);
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr!.on('data', (chunk: Buffer) => (stderrText += chunk.toString('utf8')));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      for (const wake of waiters.splice(0)) wake();
      resolve({ code, signal });
    }),
  );

  const findLog = (message: string) =>
    stdoutLines
      .map((line) => {
        try {
          return JSON.parse(line) as Record<string, unknown>;
        } catch {
          return undefined;
        }
      })
      .find((entry) => entry?.msg === message);

  async function waitForLog(message: string, timeoutMs = 30_000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = findLog(message);
      if (found) return found;
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`process exited before logging "${message}"; stderr: ${stderrText}`);
      }
      if (Date.now() > deadline) throw new Error(`no "${message}" log within ${timeoutMs} ms; stderr: ${stderrText}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 200).unref();
      });
    }
  }

  return { child, stdoutLines, stderr: () => stderrText, waitForLog, exited };
}
