import { spawn, type ChildProcessByStdio } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { AdapterError, type DecodedRestoreInput, type KernelLogger, type RestoreResult } from '@holdfast/sdk';
import { aborted, DIRECTORY_ORIGIN, toAdapterError } from './errors.js';
import type { ExtractorReport, RestoreChildPlan } from './restore-child.js';
import type { RestoreDestination } from './restore-destination.js';
import type { TarRestoreOptions } from './restore.js';

// The compiled child, found from src/internal (tests) and dist/internal alike.
const CHILD_SCRIPT = fileURLToPath(new URL('../../dist/internal/restore-child.js', import.meta.url));
const CHILD_NODE_FLAGS = ['--max-old-space-size=256'];
// After SIGTERM (a cancel), the child discards its staging and exits; one that does not within this is killed.
const STOP_GRACE_MS = 10_000;
const KEPT_STDERR_CHARS = 2000;

/** What a restore through the extractor's own process needs. */
export interface PipedRestorePlan {
  input: DecodedRestoreInput;
  destination: RestoreDestination;
  options: Pick<TarRestoreOptions, 'keepSpecialModes' | 'refuseReplacing'>;
  logger: KernelLogger;
  signal: AbortSignal;
}

/** True when the extractor's child can run here (its compiled script exists; a source checkout may lack it). */
export function canPipeRestore(): boolean {
  return existsSync(CHILD_SCRIPT);
}

/**
 * Extracts the backup in a child process whose stdin the engine's decoder writes into (decodeInto), so the decoded
 * tar never passes through this process. The child stages everything as the in-process restore does and moves it
 * into place only after this process answered its `{ready}` with `{commit}`, which it does once the engine said the
 * stored bytes were genuine (`input.verified`); otherwise it answers `{abandon}` and the child discards the staging.
 * Resolves with the child's warnings; rejects with its error (same code and words), or with how it died.
 */
export function restoreInChild(plan: PipedRestorePlan): Promise<RestoreResult> {
  const childPlan: RestoreChildPlan = { destination: plan.destination, options: plan.options };
  const child = spawn(process.execPath, [...CHILD_NODE_FLAGS, CHILD_SCRIPT, JSON.stringify(childPlan)], {
    stdio: ['pipe', 'ignore', 'pipe', 'ipc'],
  }) as ChildProcessByStdio<Writable, null, Readable>;
  // The child's stdin is the decoder's stdout from here on (the engine closes this process's copy).
  child.stdin.on('error', () => undefined);
  plan.input.decodeInto(child.stdin);
  plan.logger.debug({ pid: child.pid }, 'tar extractor started, reading the decoder');
  let stderrTail = '';
  child.stderr.on('data', (data: Buffer) => (stderrTail = `${stderrTail}${data.toString()}`.slice(-KEPT_STDERR_CHARS)));
  let outcome: ExtractorReport | undefined;
  const answer = (verdict: { commit: true } | { abandon: string }) => {
    if (child.connected) child.send(verdict);
  };
  child.on('message', (report: ExtractorReport) => {
    if ('ready' in report) {
      plan.input.verified.then(
        () => answer({ commit: true }),
        (error: unknown) => answer({ abandon: `the backup did not pass the engine's checks: ${(error as Error).message}` }),
      );
    } else outcome = report;
  });
  let killTimer: NodeJS.Timeout | undefined;
  const stop = () => {
    child.kill('SIGTERM');
    killTimer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
    killTimer.unref();
  };
  plan.signal.addEventListener('abort', stop, { once: true });
  return new Promise<RestoreResult>((resolve, reject) => {
    child.once('error', (error) => reject(toAdapterError(error, 'the tar extractor could not start')));
    child.once('close', (code, signal) => {
      plan.signal.removeEventListener('abort', stop);
      clearTimeout(killTimer);
      if (plan.signal.aborted) return reject(aborted('restore'));
      if (outcome && 'done' in outcome && code === 0) return resolve({ warnings: outcome.warnings });
      if (outcome && 'error' in outcome) return reject(new AdapterError(DIRECTORY_ORIGIN, outcome.error.code, outcome.error.message));
      const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
      reject(new AdapterError(DIRECTORY_ORIGIN, 'TRANSIENT', `restore failed: the tar extractor ${how}: ${stderrTail.trim() || 'no message'}`));
    });
  });
}
