// Child process of the benchmark: runs ONE Holdfast backup (GZIP, local destination) in-process and prints a JSON
// line with the backup's duration, size and this process's peak RSS (VmHWM). Usage:
//   node holdfast-backup.mjs postgres <database> <destinationDir> <dataDir>
//   node holdfast-backup.mjs directory <path> <destinationDir> <dataDir>
import { readFile } from 'node:fs/promises';
import { startHoldfast } from './lib/holdfast-stack.mjs';

const [kind, target, destination, dataDir] = process.argv.slice(2);
if (!['postgres', 'directory'].includes(kind) || !target || !destination || !dataDir) {
  console.error('usage: holdfast-backup.mjs postgres|directory <database|path> <destinationDir> <dataDir>');
  process.exit(2);
}

const holdfast = await startHoldfast({ dataDir });
try {
  const sourceConfig = kind === 'postgres' ? { host: '127.0.0.1', port: 5432, user: process.env.PGUSER ?? 'root', sslMode: 'disable' } : { paths: [target] };
  const source = await holdfast.call('POST', '/api/adapters', { name: `bench ${kind}`, type: 'database', adapterId: kind, config: sourceConfig });
  const storage = await holdfast.call('POST', '/api/adapters', { name: 'bench local', type: 'storage', adapterId: 'local', config: { path: destination } });
  const job = await holdfast.call('POST', '/api/jobs', {
    name: `bench ${kind}`,
    schedule: '0 0 1 1 *',
    enabled: false,
    sourceId: (source.data ?? source).id,
    databases: kind === 'postgres' ? [target] : [],
    compression: 'GZIP',
    destinations: [{ configId: (storage.data ?? storage).id }],
  });
  const jobId = (job.data ?? job).id;
  const started = process.hrtime.bigint();
  const run = await holdfast.call('POST', `/api/jobs/${jobId}/run`);
  let execution;
  for (;;) {
    execution = (await holdfast.call('GET', `/api/executions/${run.executionId}?includeLogs=true`)).data;
    if (!['Pending', 'Running'].includes(execution.status)) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const status = await readFile('/proc/self/status', 'utf8');
  const peakRssKiB = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  const errors = (execution.logs ?? []).filter((entry) => entry.level === 'error').map((entry) => entry.message);
  process.stdout.write(`${JSON.stringify({ status: execution.status, seconds, size: execution.size, path: execution.path, peakRssKiB, errors })}\n`);
} finally {
  await holdfast.close();
}
