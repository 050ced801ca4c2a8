// The tar extractor's own process (started by piped-restore.ts): its stdin is the stdout of the engine's decoder
// (`zstd -d`, `pigz -d`), so the decoded tar never passes through the server's process, whose main thread then only
// checks and forwards the stored bytes (docs/benchmarks.md, "The extractor's own process"). It runs the same
// restoreArchive as the server would, into the same staging folders, and asks before it moves anything into place:
// `{ready}` to the server over the IPC channel, which answers `{commit}` once the engine verified every stored byte,
// or `{abandon}` with the reason, and the staging is discarded. SIGTERM, or a server that went away, aborts it the
// same way. The last message is `{done, warnings}` or `{error: {code, message}}`.
import 'reflect-metadata';
import { isAdapterError, type AdapterErrorCode } from '@holdfast/sdk';
import { toAdapterError } from './errors.js';
import type { RestoreDestination } from './restore-destination.js';
import { restoreArchive, type TarRestoreOptions } from './restore.js';

/** What the server passes on the command line. */
export interface RestoreChildPlan {
  destination: RestoreDestination;
  options: Pick<TarRestoreOptions, 'keepSpecialModes' | 'refuseReplacing'>;
}

/** A message from the server. */
export type ServerVerdict = { commit: true } | { abandon: string };

/** A message to the server. */
export type ExtractorReport = { ready: true } | { done: true; warnings: string[] } | { error: { code: AdapterErrorCode; message: string } };

const plan = JSON.parse(process.argv[2] ?? '{}') as RestoreChildPlan;
const controller = new AbortController();
let pendingCommit: { resolve: () => void; reject: (error: Error) => void } | undefined;

const send = (report: ExtractorReport): Promise<void> =>
  new Promise((resolve) => {
    if (!process.connected) return resolve();
    process.send?.(report, undefined, {}, () => resolve());
  });

function stop(reason: string): void {
  controller.abort();
  pendingCommit?.reject(new Error(reason));
}

process.on('SIGTERM', () => stop('the restore was aborted'));
process.on('disconnect', () => stop('the server went away before the restore was verified'));
process.on('message', (verdict: ServerVerdict) => {
  if ('commit' in verdict) pendingCommit?.resolve();
  else pendingCommit?.reject(new Error(verdict.abandon));
});

const askToCommit = (): Promise<void> =>
  new Promise<void>((resolve, reject) => {
    pendingCommit = { resolve, reject };
    if (controller.signal.aborted) return reject(new Error('the restore was aborted'));
    void send({ ready: true });
  });

try {
  const result = await restoreArchive(process.stdin, plan.destination, controller.signal, { ...plan.options, beforeCommit: askToCommit, blockingWrites: true });
  await send({ done: true, warnings: result.warnings });
} catch (error) {
  const failure = isAdapterError(error) ? error : toAdapterError(error, 'restore failed');
  // The server adds the adapter's name again: the message goes without its "[source-directory] " prefix.
  await send({ error: { code: failure.code, message: failure.message.replace(/^\[source-directory\] /, '') } });
  process.exitCode = 1;
} finally {
  if (process.connected) process.disconnect();
  process.stdin.destroy();
}
