import type { DirectDumpCall, DirectDumpResult, DumpHandle, DumpStats, RunPlan, RunPlanDestination } from '@holdfast/kernel';
import type { StorageInstance } from './adapters.js';
import { streamBackup, type BranchOutcome, type StreamedBackup } from './backup-pipeline.js';
import { messageOf } from './outcome.js';
import type { RunContext } from './run-context.js';
import type { RunServices } from './services.js';

/** A backup whose stored stream the agent makes and uploads itself to the `direct` destinations (issue 48 scope 3). */
export interface DirectRun {
  /** The dump as the rest of the run sees it: its extension, the relayed stream, the source's stats. */
  dump: DumpHandle;
  /** Starts the uploads under `key`, stores the relayed bytes as they are, and says how every destination ended. */
  upload(key: string, onBytes: (bytes: number) => void): Promise<StreamedBackup>;
}

/** What the run decides about direct uploads before the dump starts. */
export interface DirectPlanInput {
  plan: RunPlan;
  storages: StorageInstance[];
  /** Per destination: the object lock date to write with. */
  retainUntil: ReadonlyArray<Date | undefined>;
  codec: string;
  /** Why this run cannot upload directly (seekable, archive figures); undefined when it can. */
  obstacle?: string;
}

const isDirect = (destination: RunPlanDestination) => destination.transfer === 'direct';

/**
 * Starts the run's dump on the agent with direct uploads when the source is bound to an agent and at least one
 * destination is `direct`; undefined when the run relays (no such destination, or the agent is too old: then the run's
 * log says so and every destination is relayed). Throws what the agent cannot do (a missing storage package).
 */
export async function startDirectRun(ctx: RunContext, services: RunServices, input: DirectPlanInput, onBytes: (bytes: number) => void): Promise<DirectRun | undefined> {
  const { plan, storages } = input;
  const agentId = plan.source.agentId;
  if (!agentId || !plan.destinations.some(isDirect)) return undefined;
  const runner = services.adapters.remoteRunner();
  if (input.obstacle || !runner?.directDump) {
    ctx.log.warn(`direct uploads not possible for this run (${input.obstacle ?? 'this server cannot make them'}): every destination is relayed through the server`);
    return undefined;
  }
  const directIndexes = plan.destinations.flatMap((destination, index) => (isDirect(destination) ? [index] : []));
  const relayIndexes = plan.destinations.flatMap((destination, index) => (isDirect(destination) ? [] : [index]));
  const call = await runner.directDump(
    { ...plan.source, agentId },
    {
      databases: plan.job.databases,
      engineOptions: { pgCompression: plan.job.pgCompression, engineCompression: plan.job.compression },
      codec: input.codec,
      compression: { level: plan.job.compressionLevel ?? null, threads: plan.job.compressionThreads ?? null },
      encryptionKey: plan.encryption?.key ?? null,
      recipient: plan.publicKeyEncryption?.recipient ?? null,
      destinations: directIndexes.map((index) => ({ resolved: plan.destinations[index]!, retainUntil: input.retainUntil[index] })),
      relay: relayIndexes.length > 0,
      signal: ctx.signal,
      onBytes,
    },
    { runLog: (level, message) => ctx.log[level](message) },
  );
  if (!call) {
    ctx.log.warn('the agent does not offer direct uploads (an older version): every destination is relayed through the server; upgrade the agent');
    return undefined;
  }
  ctx.log.info(`direct uploads from the agent to ${directIndexes.map((index) => storages[index]!.name).join(', ')}${relayIndexes.length > 0 ? `; relayed through the server to ${relayIndexes.map((index) => storages[index]!.name).join(', ')}` : ''}`);
  const stats = call.result.then((result) => result.stats);
  stats.catch(() => undefined);
  return {
    dump: { extension: call.extension, stream: call.relay, done: stats as Promise<DumpStats> },
    upload: (key) => upload(ctx, call, { storages, directIndexes, relayIndexes, retainUntil: input.retainUntil, key }),
  };
}

async function upload(ctx: RunContext, call: DirectDumpCall, run: { storages: StorageInstance[]; directIndexes: number[]; relayIndexes: number[]; retainUntil: ReadonlyArray<Date | undefined>; key: string }): Promise<StreamedBackup> {
  const { storages, key } = run;
  call.start(key);
  try {
    const relayed = run.relayIndexes.length > 0 ? relay(ctx, call, run) : drain(call);
    // Both settle before anything is decided, so no relayed put is still writing when a failed run cleans up.
    const [result, relayedStream] = await Promise.allSettled([call.result, relayed]);
    if (result.status === 'rejected') throw result.reason;
    if (relayedStream.status === 'rejected') throw relayedStream.reason;
    return merge(run, result.value, relayedStream.value);
  } catch (error) {
    // The agent aborts its uploads itself; a killed agent cannot, so its unfinished multipart uploads go here.
    for (const index of run.directIndexes) await storages[index]!.adapter.removeIncomplete?.(key).catch((cleanup: unknown) => ctx.log.warn(`could not remove the unfinished upload from ${storages[index]!.name}: ${messageOf(cleanup)}`));
    throw error;
  }
}

/** The relayed destinations get the agent's processed bytes as they are: no second compression or encryption. */
function relay(ctx: RunContext, call: DirectDumpCall, run: { storages: StorageInstance[]; relayIndexes: number[]; retainUntil: ReadonlyArray<Date | undefined>; key: string }): Promise<StreamedBackup> {
  const streamed = streamBackup({
    dump: call.relay,
    codec: 'NONE',
    encryptionKey: null,
    recipient: null,
    storages: run.relayIndexes.map((index) => run.storages[index]!),
    key: run.key,
    retainUntil: run.relayIndexes.map((index) => run.retainUntil[index]),
    signal: ctx.signal,
    onBytes: () => undefined,
  });
  return streamed;
}

/** Nothing relayed: the call's stream carries no bytes and ends with the call. */
async function drain(call: DirectDumpCall): Promise<undefined> {
  for await (const chunk of call.relay) {
    if ((chunk as Buffer).length > 0) throw new Error('the agent relayed bytes although no destination is relayed');
  }
  return undefined;
}

/** Every destination's outcome in the job's order; the stored stream's digests are the agent's, checked by the relay. */
function merge(run: { storages: StorageInstance[]; directIndexes: number[]; relayIndexes: number[] }, result: DirectDumpResult, relayed: StreamedBackup | undefined): StreamedBackup {
  if (relayed && relayed.digests.sha256 !== result.digests.sha256) {
    throw new Error(`the relayed bytes do not match the agent's: sha256 ${relayed.digests.sha256} received, ${result.digests.sha256} sent`);
  }
  const outcomes: BranchOutcome[] = run.storages.map((storage) => ({ storage, ok: false, error: 'no outcome' }));
  run.relayIndexes.forEach((index, position) => (outcomes[index] = relayed!.outcomes[position]!));
  for (const index of run.directIndexes) {
    const storage = run.storages[index]!;
    const outcome = result.outcomes.find((o) => o.configId === storage.configId);
    outcomes[index] = outcome ? { storage, ok: outcome.ok, ...(outcome.size === undefined ? {} : { size: outcome.size }), ...(outcome.error ? { error: outcome.error } : {}) } : { storage, ok: false, error: 'the agent reported no outcome' };
  }
  return { digests: result.digests, encryption: result.encryption as StreamedBackup['encryption'], outcomes };
}
