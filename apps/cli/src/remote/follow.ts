import type { ExecutionView, HoldfastClient } from '@holdfast/client';
import { ExitError } from './exit-codes.js';
import { ProgressReporter, stderrSink } from './progress.js';

/**
 * Follows an execution to its end with a progress display on stderr. Ctrl-C stops waiting only: the run goes on
 * on the server, and the message says how to cancel it.
 */
export async function followRun(client: HoldfastClient, executionId: string, _options: { json?: boolean } = {}): Promise<ExecutionView> {
  const reporter = new ProgressReporter(stderrSink());
  const controller = new AbortController();
  const interrupt = () => controller.abort();
  process.once('SIGINT', interrupt);
  try {
    const final = await client.waitForExecution(executionId, { onProgress: (progress) => reporter.update(progress), signal: controller.signal });
    reporter.finish(final);
    return final;
  } catch (error) {
    if (controller.signal.aborted) {
      throw new ExitError(`stopped waiting; execution ${executionId} keeps running (holdfast runs cancel ${executionId} stops it)`, 130);
    }
    throw error;
  } finally {
    process.off('SIGINT', interrupt);
  }
}
