import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Readable, type Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { DumpHandle, DumpStats, KernelLogger } from '@holdfast/sdk';
import { aborted, toAdapterError } from './errors.js';
import type { SyncPackPlan } from './sync-pack.js';

// The compiled child, found from src/internal (tests) and dist/internal alike.
const CHILD_SCRIPT = fileURLToPath(new URL('../../dist/internal/pack-child.js', import.meta.url));
// The child's own heap stays small: it holds one buffer and the walk's folder names.
const CHILD_NODE_FLAGS = ['--max-old-space-size=256', '--max-semi-space-size=1'];
// Lines of the child's stderr that are not its reports (a crash's trace) kept for the error message.
const KEPT_STDERR_CHARS = 2000;

/** What a piped dump needs. */
export interface PipedDumpPlan extends SyncPackPlan {
  /** The compressor's stdin (DumpOptions.compressorInput): the child's stdout. */
  input: Writable;
  logger: KernelLogger;
  signal: AbortSignal;
}

/** One JSON line of the child's stderr (pack-child.ts). */
interface Report {
  bytes?: number;
  done?: number;
  warnings?: string[];
  error?: string;
}

/** True when the archive writer's child can run here (its compiled script exists; a source checkout may lack it). */
export function canPipeDump(): boolean {
  return existsSync(CHILD_SCRIPT);
}

/**
 * Starts the archive writer in a child process whose stdout is the compressor's stdin, so the tar never passes
 * through this process (DumpOptions.compressorInput). The handle's stream is empty; `piped.bytesWritten` counts what
 * the child reported, and `done` resolves once it exited cleanly, with its byte count and warnings, or rejects with
 * what it said (or how it died). Aborting kills the child; a compressor that goes away ends it (a broken pipe).
 */
export async function startPipedDump(plan: PipedDumpPlan): Promise<DumpHandle> {
  const childPlan: SyncPackPlan = { roots: plan.roots, exclude: plan.exclude, followSymlinks: plan.followSymlinks };
  const child = spawn(process.execPath, [...CHILD_NODE_FLAGS, CHILD_SCRIPT, JSON.stringify(childPlan)], {
    stdio: ['ignore', plan.input, 'pipe'],
  });
  let bytes = 0;
  let final: Report | undefined;
  let failure: string | undefined;
  let stderrTail = '';
  createInterface({ input: child.stderr }).on('line', (line) => {
    const report = parseReport(line);
    if (!report) {
      stderrTail = `${stderrTail}${line}\n`.slice(-KEPT_STDERR_CHARS);
      return;
    }
    if (report.bytes !== undefined) bytes = report.bytes;
    if (report.done !== undefined) {
      bytes = report.done;
      final = report;
    }
    if (report.error !== undefined) failure = report.error;
  });
  const kill = () => child.kill('SIGKILL');
  plan.signal.addEventListener('abort', kill, { once: true });
  const done = new Promise<DumpStats>((resolve, reject) => {
    child.once('error', (error) => reject(toAdapterError(error, 'the archive writer could not start')));
    child.once('close', (code, signal) => {
      plan.signal.removeEventListener('abort', kill);
      if (plan.signal.aborted) return reject(aborted('dump'));
      if (code === 0 && final) {
        return resolve({ bytes, databases: plan.roots.map((root) => root.path), engineVersion: undefined, warnings: final.warnings ?? [] });
      }
      const how = signal ? `was killed by ${signal}` : `exited with status ${code}`;
      reject(toAdapterError(new Error(`the archive writer ${how}: ${failure ?? (stderrTail.trim() || 'no message')}`), 'dump failed'));
    });
  });
  done.catch(() => undefined);
  // A child that cannot start fails dump() itself, before anything is uploaded.
  await Promise.race([once(child, 'spawn'), done]);
  plan.logger.debug({ pid: child.pid }, 'archive writer started, writing into the compressor');
  return { stream: Readable.from([]), done, extension: '.tar', piped: { bytesWritten: () => bytes } };
}

function parseReport(line: string): Report | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    return JSON.parse(line) as Report;
  } catch {
    return undefined;
  }
}
