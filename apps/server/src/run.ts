import { applyServerHeapSettings, describeHeapGrowth } from './heap-settings.js';
import { startServer, type ServerHandle } from './start-server.js';
import { applyYoungCollections, youngCollectionsFrom } from './young-collections.js';

/**
 * Runs the server as the process's main job: starts it, then on SIGTERM or SIGINT shuts down gracefully and
 * exits 0 (1 when shutdown itself fails). Used by `node dist/main.js` and `holdfast serve`. Sets the process's V8 heap
 * growth first (heap-settings.ts) and, once started, the young collections while busy (young-collections.ts): this
 * is the one place that owns the whole process.
 */
export async function runServerProcess(env: NodeJS.ProcessEnv = process.env): Promise<ServerHandle> {
  const heap = applyServerHeapSettings(env);
  // Read now, so a bad value stops the start before the data directory is touched.
  youngCollectionsFrom(env);
  const handle = await startServer({ env });
  heap.markIdle();
  const youngCollections = applyYoungCollections(env);
  handle.logger.info({ heapGrowingPercent: describeHeapGrowth(heap.growth), youngCollections: youngCollections ? 'auto' : 'off' }, 'V8 heap growth set');
  const onSignal = (signal: NodeJS.Signals) => {
    handle.logger.info({ signal }, 'shutdown requested');
    youngCollections?.stop();
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
