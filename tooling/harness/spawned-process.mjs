// Test support shared by the server and CLI suites: a spawned node process whose JSON log lines tests can wait for.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** Runs `node <script> ...args` with exactly `env`, collecting stdout lines (pino JSON logs) and stderr. */
export function spawnNode(script, args, env) {
  const child = spawn(process.execPath, [script, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const stdoutLines = [];
  let stderrText = '';
  const waiters = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    stdoutLines.push(line);
    for (const wake of waiters.splice(0)) wake();
  });
  child.stderr.on('data', (chunk) => (stderrText += chunk.toString('utf8')));
  const exited = new Promise((resolve) =>
    child.on('exit', (code, signal) => {
      for (const wake of waiters.splice(0)) wake();
      resolve({ code, signal });
    }),
  );

  const findLog = (message) =>
    stdoutLines
      .map((line) => {
        try {
          return JSON.parse(line);
        } catch {
          return undefined;
        }
      })
      .find((entry) => entry?.msg === message);

  async function waitForLog(message, timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = findLog(message);
      if (found) return found;
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(`process exited before logging "${message}"; stderr: ${stderrText}`);
      }
      if (Date.now() > deadline) throw new Error(`no "${message}" log within ${timeoutMs} ms; stderr: ${stderrText}`);
      await new Promise((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 200).unref();
      });
    }
  }

  return { child, stdoutLines, stderr: () => stderrText, waitForLog, exited };
}
