import type { Readable } from 'node:stream';
import {
  AdapterError,
  type ArchiveRestoreInput,
  type DatabaseSize,
  type DumpHandle,
  type DumpOptions,
  type DumpStats,
  type HealthResult,
  type RestoreOptions,
  type RestoreResult,
  type RestoreTarget,
  type ResolvedAdapterConfig,
  type SourceAdapter,
  type SourceScratch,
  type SourceVersion,
  type KernelLogger,
  type RemoteSourceOptions,
} from '@holdfast/kernel';
import type { CallChannel, CallRequest } from './call-channel.js';
import { SCRATCH_METHODS } from './call-frames.js';
import { ARCHIVE_FEATURE, remoteArchiveDump, remoteArchiveRestore, type StartArchiveCall } from './remote-archive.js';
import { remoteScratch } from './remote-scratch.js';

/** Optional methods the source's adapter implements (read from the server's copy of the same package). */
export interface RemoteOffers {
  databaseSizes: boolean;
  restoreWouldReplace: boolean;
  /** `restoreArchive` (seekable archives, written and restored on the agent: remote-archive.ts). */
  restoreArchive?: boolean;
}

/** What a remote source needs of the runner: the channel of its agent, once connected and able to run the adapter. */
export interface AgentLink {
  /** `feature`: a call only agents listing it in their hello answer (fails naming the agent otherwise). */
  channelFor(agentId: string, adapterId: string, offlineWaitMs: number, signal?: AbortSignal, feature?: string): Promise<CallChannel>;
}

/**
 * A source adapter whose every call runs on a remote agent (issue 48): the agent builds the same adapter package
 * from the config sent with the call (secrets included, for that call only) and disposes it afterwards. Byte streams
 * (a dump's output, a restore's input) flow through the connection with credit-based flow control.
 * Test restores use scratch on the agent (`scratch()`: throwaway databases, scratch files, reserved indexes); point-in-time
 * recovery is not offered through agents yet (docs/agents.md "Not built yet"): `pointInTime()` is null. Seekable
 * archives are written and restored on the agent (remote-archive.ts).
 */
export class RemoteSource implements SourceAdapter {
  /** Present only when the adapter has it, as callers branch on its presence (sizes shown or not). */
  databaseSizes?: () => Promise<DatabaseSize[]>;
  restoreWouldReplace?: (target: RestoreTarget, signal?: AbortSignal) => Promise<string[]>;
  restoreArchive?: (input: ArchiveRestoreInput, options: RestoreOptions) => Promise<RestoreResult>;

  constructor(
    private readonly resolved: ResolvedAdapterConfig & { agentId: string },
    private readonly link: AgentLink,
    private readonly offlineWaitMs: number,
    offers: RemoteOffers,
    private readonly logs: { logger?: KernelLogger; runLog?: RemoteSourceOptions['runLog'] } = {},
    private readonly localScratch?: () => SourceScratch,
  ) {
    if (offers.databaseSizes) this.databaseSizes = () => this.value<DatabaseSize[]>('databaseSizes');
    if (offers.restoreWouldReplace) this.restoreWouldReplace = (target, signal) => this.value<string[]>('restoreWouldReplace', { target }, signal);
    if (offers.restoreArchive) this.restoreArchive = (input, options) => remoteArchiveRestore(this.archiveCall, input, options);
  }

  private async start(method: CallRequest['method'], options: Record<string, unknown>, extra: Partial<CallRequest> = {}, needs?: string) {
    const feature = needs ?? (SCRATCH_METHODS.has(method) ? 'scratch' : undefined);
    const channel = await this.link.channelFor(this.resolved.agentId, this.resolved.adapterId, this.offlineWaitMs, extra.signal, feature);
    return channel.start({
      method,
      adapterId: this.resolved.adapterId,
      config: this.resolved.config,
      credentials: this.resolved.credentials,
      options,
      onLog: (level, message) => this.adapterLogLine(method, level, message),
      ...extra,
    });
  }

  /**
   * A log line of the adapter on the agent: into the run's log (an error-level line as a warning, so it does not
   * become the run's error: the call's own error does) and the server's log, tagged with the agent.
   */
  adapterLogLine(method: CallRequest['method'], level: 'info' | 'warn' | 'error', message: string): void {
    this.logs.logger?.[level]({ agentId: this.resolved.agentId, method, fromAgent: true }, message);
    this.logs.runLog?.(level === 'info' ? 'info' : 'warn', `agent: ${level === 'error' ? 'error: ' : ''}${message}`);
  }

  /** Seekable archive calls, only on agents whose hello lists the `archive` feature. */
  private readonly archiveCall: StartArchiveCall = (method, options, extra) => this.start(method, options, extra, ARCHIVE_FEATURE);

  private async value<T>(method: CallRequest['method'], options: Record<string, unknown> = {}, signal?: AbortSignal, feature?: string): Promise<T> {
    return (await (await this.start(method, options, { signal }, feature)).result) as T;
  }

  async check(): Promise<HealthResult> {
    const started = Date.now();
    try {
      return await this.value<HealthResult>('check');
    } catch (error) {
      // Unreachable agent (offline, revoked, missing the adapter) is a failed check, with the reason.
      return { ok: false, message: error instanceof Error ? error.message : String(error), latencyMs: Date.now() - started };
    }
  }

  detectVersion(): Promise<SourceVersion> {
    return this.value<SourceVersion>('detectVersion');
  }

  listDatabases(): Promise<string[]> {
    return this.value<string[]>('listDatabases');
  }


  async dump(options: DumpOptions): Promise<DumpHandle> {
    if (options.archive) return remoteArchiveDump(this.archiveCall, options);
    const call = await this.start('dump', { databases: options.databases, engineOptions: options.engineOptions ?? {} }, { output: true, signal: options.signal });
    const { extension, stream } = await call.opened;
    const done = call.result as Promise<DumpStats>;
    done.catch(() => undefined);
    return { extension, stream, done };
  }

  async restore(stream: Readable, options: RestoreOptions): Promise<RestoreResult> {
    const call = await this.start('restore', { target: options.target, ...(options.overwrite === undefined ? {} : { overwrite: options.overwrite }) }, { input: stream, signal: options.signal });
    try {
      return (await call.result) as RestoreResult;
    } finally {
      // The input may still be open when the agent failed early: stop reading it.
      if (!stream.destroyed && !stream.readableEnded) stream.destroy();
    }
  }

  pointInTime(): null {
    return null;
  }

  /**
   * Test restores on the agent (remote-scratch.ts): throwaway databases on its database server, a scratch file in a
   * folder on its disk, or a reserved index on its Redis. What the scratch is comes from the server's copy of the
   * adapter (`localScratch`), without connecting.
   */
  scratch(): SourceScratch {
    const origin = `source-${this.resolved.adapterId}`;
    const local = this.localScratch?.();
    if (!local) throw new AdapterError(origin, 'UNSUPPORTED', 'this source has no scratch databases');
    return remoteScratch(local, this.resolved.agentId, origin, (method, options, feature, signal) => this.value(method, options, signal, feature));
  }

  async dispose(): Promise<void> {
    // Nothing held here: the agent disposes its instance after each call.
  }
}
