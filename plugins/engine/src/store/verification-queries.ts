import { ExecutionEntity, type Execution, type ExecutionType } from './entities.js';
import type { ExecutionStore } from './execution-store.js';

/** The newest finished executions of `type` (optionally of one job), newest first. */
export async function recentFinished(store: ExecutionStore, type: ExecutionType, options: { jobId?: string; limit?: number } = {}): Promise<Execution[]> {
  return store.em().find(
    ExecutionEntity,
    { type, status: { $in: ['Success', 'Partial', 'Failed'] }, ...(options.jobId ? { jobId: options.jobId } : {}) },
    { orderBy: { startedAt: 'desc', id: 'desc' }, limit: options.limit ?? 20 },
  );
}
