import { applyServerHeapSettings, describeHeapGrowth } from './heap-settings.js';
import { startServer, type ServerHandle } from './start-server.js';

/**
 * Runs the server as the process's main job: starts it, then on SIGTERM or SIGINT shuts down gracefully and
 * exits 0 (1 when shutdown itself fails). Used by `node dist/main.js` and `holdfast serve`. Sets the process's V8 heap
 * growth first (heap-settings.ts): this is the one place that owns the whole process.
 */
export async function runServerProcess(env: NodeJS.ProcessEnv = process.env): Promise<ServerHandle> {
  const heap = applyServerHeapSettings(env);
  const handle = await startServer({ env });
  heap.markIdle();
  handle.logger.info({ heapGrowingPercent: describeHeapGrowth(heap.growth) }, 'V8 heap growth set');
  const onSignal = (signal: NodeJS.Signals) => {
    handle.logger.info({ signal }, 'shutdown requested');
    handle.close().then(
      () => process.exit(0),
      (error: unknown) => {
        handle.logger.error({ err: error }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', onSignal);
  process.once('SIGINT', onSignal);
  return handle;
}
