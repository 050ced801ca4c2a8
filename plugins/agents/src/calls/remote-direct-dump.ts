import type { Readable } from 'node:stream';
import { AdapterError, type DirectDumpCall, type DirectDumpRequest, type DirectDumpResult, type DumpStats, type ResolvedAdapterConfig } from '@holdfast/kernel';
import type { CallChannel } from './call-channel.js';
import { directDumpResult, type DirectBundle, type DirectDumpOptions } from './direct-bundle.js';
import { sealBundle } from './sealed-bundle.js';

/** What {@link startDirectDump} needs: the agent's live connection and its key for this connection. */
export interface DirectDumpStart {
  agentId: string;
  sealKey: string;
  channel: CallChannel;
  resolved: ResolvedAdapterConfig;
  request: DirectDumpRequest;
  onLog(level: 'info' | 'warn' | 'error', message: string): void;
}

/** The destinations' settings (secrets decrypted) and the job's key, as sealed for the agent. */
function bundleOf(request: DirectDumpRequest): DirectBundle {
  return {
    destinations: request.destinations.map(({ resolved, retainUntil }) => ({
      configId: resolved.configId,
      name: resolved.name,
      adapterId: resolved.adapterId,
      config: resolved.config,
      credentials: resolved.credentials ?? {},
      ...(retainUntil ? { retainUntil: retainUntil.toISOString() } : {}),
    })),
    encryptionKey: request.encryptionKey ? request.encryptionKey.toString('base64') : null,
    recipient: request.recipient,
  };
}

/**
 * Starts a `directDump` call on the agent (docs/agents.md "Direct uploads"): the source's config travels like every
 * call's; the destinations' settings and the job's key are sealed to the connection's X25519 key for this call id.
 * Resolves once the agent's dump started (`opened`); the agent uploads only after {@link DirectDumpCall.start}.
 */
export async function startDirectDump(start: DirectDumpStart): Promise<DirectDumpCall> {
  const { resolved, request } = start;
  const options: DirectDumpOptions = {
    databases: request.databases,
    engineOptions: request.engineOptions,
    codec: request.codec,
    compression: request.compression,
    relay: request.relay,
  };
  const bundle = bundleOf(request);
  const handle = start.channel.start({
    method: 'directDump',
    adapterId: resolved.adapterId,
    config: resolved.config,
    credentials: resolved.credentials ?? {},
    options,
    output: true,
    signal: request.signal,
    seal: (callId) => sealBundle(start.sealKey, start.agentId, callId, bundle),
    onProgress: (bytes) => request.onBytes(bytes),
    onLog: start.onLog,
  });
  const result = handle.result.then((value): DirectDumpResult => {
    const parsed = directDumpResult.safeParse(value);
    if (!parsed.success) throw new AdapterError(`source-${resolved.adapterId}`, 'TRANSIENT', `the agent's direct upload answered a malformed result: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
    return { ...parsed.data, stats: parsed.data.stats as unknown as DumpStats, encryption: parsed.data.encryption };
  });
  result.catch(() => undefined);
  const { extension, stream } = await handle.opened;
  return { extension, relay: stream as Readable, start: (key) => handle.target(key), result };
}
