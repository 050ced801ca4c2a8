import type { RemoteSourceRunner } from '@holdfast/kernel';
import type { Execution } from '../store/entities.js';
import type { RunServices } from '../run/services.js';
import { readSidecar } from '../run/sidecar.js';

/**
 * Several server processes on one PostgreSQL (issue 48, docs/agents.md "Several server processes"): an agent keeps
 * one connection, to one process, and only that process can make calls on it. This finds, for a run just claimed,
 * the agent its source runs on, so the engine can hand the run over to the process holding that agent's connection
 * instead of relaying bytes between processes.
 *
 * Covered: backups and test restores (the job's source), restores naming `targetSourceId`, and restores into the
 * source recorded in the backup's sidecar (read from the storage, as the restore itself does first).
 */
export async function agentOfRun(execution: Execution, services: RunServices): Promise<string | null> {
  const request = parseRequest(execution.request);
  if (execution.type === 'Backup' && execution.jobId) return (await services.catalog.resolveRunPlan(execution.jobId)).source.agentId ?? null;
  if (execution.type !== 'Restore') return null;
  if (request?.testRestore === true && typeof request.jobId === 'string') return (await services.catalog.resolveRunPlan(request.jobId)).source.agentId ?? null;
  const sourceId = typeof request?.targetSourceId === 'string' ? request.targetSourceId : await sidecarSourceId(request, services);
  if (!sourceId) return null;
  const config = await services.catalog.resolveAdapterConfig(sourceId);
  return config.kind === 'source' ? (config.agentId ?? null) : null;
}

/** The source a restore without `targetSourceId` goes to: the one its backup's sidecar records. */
async function sidecarSourceId(request: Record<string, unknown> | null, services: RunServices): Promise<string | null> {
  if (typeof request?.storageId !== 'string' || typeof request.file !== 'string') return null;
  const storage = services.adapters.storage(await services.catalog.resolveAdapterConfig(request.storageId));
  try {
    return (await readSidecar(storage.adapter, request.file))?.source?.configId ?? null;
  } finally {
    await storage.adapter.dispose?.().catch(() => undefined);
  }
}

/** The live worker that must run this execution instead of `processId`, or null to run it here. */
export async function holderElsewhere(
  execution: Execution,
  services: RunServices,
  runner: RemoteSourceRunner | undefined,
  processId: string,
  liveWorkers: () => Promise<string[]>,
): Promise<string | null> {
  if (!runner?.holderOf) return null;
  const agentId = await agentOfRun(execution, services);
  if (!agentId) return null;
  const holder = await runner.holderOf(agentId);
  if (!holder || holder === processId) return null;
  // An agent held by an `api` process (it never claims) or a process that stopped: run here, waiting for the agent.
  return (await liveWorkers()).includes(holder) ? holder : null;
}

function parseRequest(text: string | null | undefined): Record<string, unknown> | null {
  if (!text) return null;
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
