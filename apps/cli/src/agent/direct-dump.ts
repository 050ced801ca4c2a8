import { directBundle, directDumpOptions, openBundle, type CallFrame, type CreditedSender, type DirectDumpResultFrame, type SealKeyPair } from '@holdfast/agents/protocol';
import { streamBackup, BackupStreamError, type CompressionCodec, type StorageInstance } from '@holdfast/engine';
import { instantiateAdapter, type AdapterRegistry, type KernelLogger, type SourceAdapter, type StorageAdapter, type StorageCapabilities } from '@holdfast/kernel';
import type { Readable } from 'node:stream';
import { container } from 'tsyringe';

/** What a direct dump needs of the call runner. */
export interface DirectDumpDeps {
  registry: AdapterRegistry;
  keys: SealKeyPair;
  agentId: string;
  output: CreditedSender;
  signal: AbortSignal;
  logger: KernelLogger;
  send(frame: object): void;
  /** Settles with the object key once the server sent it (after `opened`). */
  target: Promise<string>;
}

/** Progress frames at most this often (the server's progress is written once a second anyway). */
const PROGRESS_EVERY_MS = 250;

/** The processed bytes for the relayed destinations, as a destination of the agent's own fan-out. */
function relayDestination(output: CreditedSender): StorageInstance {
  const adapter = {
    put: async (_key: string, body: Readable) => ({ size: await output.send(body) }),
  } as unknown as StorageAdapter;
  return { configId: 'relay', name: 'the server (relayed destinations)', adapterId: 'relay', adapter, capabilities: {} as StorageCapabilities };
}

/**
 * A `directDump` call (docs/agents.md "Direct uploads"): opens the sealed bundle in memory, starts the dump, waits
 * for the object key, then runs the engine's own stored-stream pipeline (compress, encrypt, hash, fan-out) with the
 * destinations' storage adapters, plus the relay to the server when some destinations are relayed. The secrets live
 * in this call's memory only; every adapter instance is disposed when it ends, and an abort (cancel, lost
 * connection) aborts every upload, so the adapters remove what they had started.
 */
export async function runDirectDump(frame: CallFrame, source: SourceAdapter, deps: DirectDumpDeps): Promise<DirectDumpResultFrame> {
  if (!frame.sealed) throw new Error('direct dump without its sealed secrets');
  const options = directDumpOptions.parse(frame.options);
  const bundle = directBundle.parse(openBundle(deps.keys, deps.agentId, frame.id, frame.sealed));
  const storages: StorageInstance[] = [];
  try {
    for (const destination of bundle.destinations) {
      const found = deps.registry.get('storage', destination.adapterId);
      if (!found) throw new Error(`this agent has no storage adapter "${destination.adapterId}" for destination "${destination.name}"`);
      const adapter = instantiateAdapter(container, found.definition, destination.config, {
        instanceId: destination.configId,
        instanceName: destination.name,
        logger: deps.logger,
        credentials: destination.credentials,
      }) as StorageAdapter;
      storages.push({ configId: destination.configId, name: destination.name, adapterId: destination.adapterId, adapter, capabilities: found.definition.capabilities as StorageCapabilities });
    }
    const handle = await source.dump({ databases: options.databases, engineOptions: options.engineOptions, signal: deps.signal });
    handle.done.catch(() => undefined);
    handle.stream.on('error', () => undefined);
    deps.send({ type: 'opened', id: frame.id, extension: handle.extension });
    const aborted = new Promise<never>((_, reject) => {
      if (deps.signal.aborted) reject(deps.signal.reason as Error);
      deps.signal.addEventListener('abort', () => reject(deps.signal.reason as Error), { once: true });
    });
    aborted.catch(() => undefined);
    const key = await Promise.race([deps.target, aborted]);
    const all = options.relay ? [...storages, relayDestination(deps.output)] : storages;
    const retainUntil = bundle.destinations.map((d) => (d.retainUntil ? new Date(d.retainUntil) : undefined));
    let lastProgress = 0;
    let streamed;
    try {
      streamed = await streamBackup({
        dump: handle.stream,
        codec: options.codec as CompressionCodec,
        compression: options.compression,
        encryptionKey: bundle.encryptionKey ? Buffer.from(bundle.encryptionKey, 'base64') : null,
        recipient: bundle.recipient,
        storages: all,
        key,
        retainUntil,
        signal: deps.signal,
        onBytes: (bytes) => {
          if (Date.now() - lastProgress < PROGRESS_EVERY_MS) return;
          lastProgress = Date.now();
          deps.send({ type: 'progress', id: frame.id, bytes });
        },
      });
    } catch (error) {
      // The dump's own failure says more than the stream's.
      await handle.done;
      throw error instanceof BackupStreamError ? error.cause : error;
    }
    const relayed = options.relay ? streamed.outcomes.at(-1) : undefined;
    if (relayed && !relayed.ok) throw new Error(`the relay to the server failed: ${relayed.error ?? 'unknown error'}`);
    // The call's stream ends also when nothing was relayed: the server waits for it.
    deps.send({ type: 'end', id: frame.id });
    const stats = await handle.done;
    return {
      stats: stats as unknown as Record<string, unknown>,
      digests: streamed.digests,
      encryption: (streamed.encryption as unknown as Record<string, unknown> | null) ?? null,
      outcomes: streamed.outcomes.slice(0, storages.length).map((outcome) => ({
        configId: outcome.storage.configId,
        ok: outcome.ok,
        ...(outcome.size === undefined ? {} : { size: outcome.size }),
        ...(outcome.error ? { error: outcome.error.slice(0, 4000) } : {}),
      })),
    };
  } finally {
    await Promise.allSettled(storages.map((storage) => storage.adapter.dispose?.()));
  }
}
