// The archive writer's own process (started by piped-dump.ts): writes the tar of the plan on its command line into
// its stdout, which is the stdin of the backup's compressor (zstd, pigz), so the uncompressed bytes never pass
// through the server's process. Everything is synchronous: blocking reads and writes cost nothing here, where no
// event loop waits, and spare the thread-pool round trips that made the in-process writer 2-3 times slower than
// `tar | zstd` (docs/benchmarks.md, "The archive writer's own process"). Reports go to stderr as JSON lines:
// `{"bytes":n}` now and then, `{"done":n,"warnings":[...]}` at the end, `{"error":"..."}` when it fails.
import 'reflect-metadata';
import { writeSync } from 'node:fs';
import type { KernelLogger } from '@holdfast/sdk';
import { describeFileError } from './errors.js';
import { packSync, SyncTarSink, type SyncPackPlan } from './sync-pack.js';
import { WarningList } from './warnings.js';

// Progress lines at most this often.
const PROGRESS_EVERY_MS = 200;

function report(line: object): void {
  const text = Buffer.from(`${JSON.stringify(line)}\n`);
  let written = 0;
  while (written < text.length) written += writeSync(2, text, written);
}

// Debug lines of the walk (a socket not archived) are not worth a report.
const quiet: KernelLogger = { debug() {}, info() {}, warn() {}, error() {}, child: () => quiet } as unknown as KernelLogger;

const plan = JSON.parse(process.argv[2] ?? '{}') as SyncPackPlan;
const warnings = new WarningList();
let reportedAt = 0;
const sink = new SyncTarSink(1, (bytes) => {
  const now = Date.now();
  if (now - reportedAt < PROGRESS_EVERY_MS) return;
  reportedAt = now;
  report({ bytes });
});
try {
  packSync(plan, sink, warnings, quiet);
  report({ done: sink.bytes, warnings: warnings.list() });
} catch (error) {
  // EPIPE: the compressor is gone (the backup failed or was cancelled on the server's side).
  report({ error: describeFileError(error) });
  process.exitCode = 1;
}
