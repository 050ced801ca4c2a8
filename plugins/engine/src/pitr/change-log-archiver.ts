import { createReadStream } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import type { ChangeLogNotice, ChangeLogSegment, EventBus, JobCatalog, KernelLogger, RunPlan, SettingsReader } from '@holdfast/kernel';
import type { CompressionCodec } from '../codec/index.js';
import { disposeAll, type AdapterFactory, type StorageInstance } from '../run/adapters.js';
import { BackupStreamError, streamBackup } from '../run/backup-pipeline.js';
import type { ChangeLogStore } from './change-log-store.js';
import { emitPitrEvent } from './pitr-events.js';
import { LagWatch } from './pitr-gauges-lag.js';
import { segmentKey } from './segment-key.js';

/** Delays between attempts to store a piece that some destination refused (doubling from `firstMs` up to `maxMs`). */
export interface RetryPolicy {
  firstMs: number;
  maxMs: number;
}

/** What the archiver needs from the engine. */
export interface ArchiverDeps {
  catalog: JobCatalog;
  adapters: AdapterFactory;
  store: ChangeLogStore;
  events: EventBus | undefined;
  logger: KernelLogger;
  /** Where the lag alert threshold is read (`pitr.lagAlertBytes`); absent: the default. */
  settings?: SettingsReader;
}

/** Options of {@link runChangeLogArchiver}. */
export interface ArchiverOptions {
  jobId: string;
  spoolDir: string;
  flushIntervalMs: number;
  retry: RetryPolicy;
  signal: AbortSignal;
  /** Told when the archiver starts streaming, waits to retry a destination, or streams again. */
  onState?(state: 'streaming' | 'retrying', error?: string): void;
}

/**
 * Streams one job's change log to every destination of the job until `signal` aborts (resolves) or the stream fails
 * (rejects). Each piece the source reports goes through the backup pipeline (the job's codec and encryption, hashing,
 * fan-out) to its key under `pitr/<job>/wal/`; only when every destination holds it is the source told it may forget
 * it, so a destination that refuses holds the stream back (the spool keeps the log) instead of losing a piece.
 */
export async function runChangeLogArchiver(deps: ArchiverDeps, options: ArchiverOptions): Promise<void> {
  const plan = await deps.catalog.resolveRunPlan(options.jobId);
  const logger = deps.logger.child?.({ jobId: plan.job.id, pitr: true }) ?? deps.logger;
  const source = deps.adapters.source(plan.source);
  const storages = plan.destinations.map((destination) => deps.adapters.storage(destination));
  try {
    const support = source.pointInTime?.() ?? null;
    if (!support) throw new Error(`source ${plan.source.name} (${plan.source.adapterId}) is not set up for point-in-time recovery`);
    if (storages.length === 0) throw new Error('the job has no destination');
    const stream = support.openChangeLogStream({ streamId: plan.job.id, spoolDir: options.spoolDir, flushIntervalMs: options.flushIntervalMs, signal: options.signal });
    const lag = new LagWatch({ store: deps.store, events: deps.events, settings: deps.settings, logger }, { jobId: plan.job.id, jobName: plan.job.name }, support.logKind);
    stream.onNotice((notice) => reportNotice(deps, logger, plan, notice, lag));
    // `done` may reject while the segment loop waits; it is awaited below, so the rejection is handled.
    stream.done.catch(() => undefined);
    logger.info(`change-log archiving of job "${plan.job.name}" started: ${storages.map((s) => s.name).join(', ')}`);
    options.onState?.('streaming');
    const archiver = new PieceArchiver(deps, logger, plan, storages, options);
    try {
      for await (const segment of stream.segments) {
        await archiver.store(segment);
        await stream.archived(segment);
      }
    } catch (error) {
      if (options.signal.aborted) return;
      throw error;
    }
    await stream.done;
  } finally {
    await disposeAll([source, ...storages.map((storage) => storage.adapter)]);
  }
}

function reportNotice(deps: ArchiverDeps, logger: KernelLogger, plan: RunPlan, notice: ChangeLogNotice, lag: LagWatch): void {
  const job = { jobId: plan.job.id, jobName: plan.job.name };
  switch (notice.type) {
    case 'started':
      logger.info(`change-log stream on slot ${notice.slot} ${notice.resumedFrom ? `resumed from ${notice.resumedFrom}` : 'started'}`);
      return;
    case 'gap':
      logger.error(`change-log gap: ${notice.message}`);
      emitPitrEvent(deps.events, logger, 'pitr_gap', { ...job, message: notice.message, ...(notice.lastArchived ? { lastArchived: notice.lastArchived } : {}), ...(notice.nextAvailable ? { nextAvailable: notice.nextAvailable } : {}) });
      return;
    case 'slot-missing':
      logger.error(`replication slot ${notice.slot} is missing: ${notice.message}`);
      emitPitrEvent(deps.events, logger, 'pitr_slot_missing', { ...job, slot: notice.slot, message: notice.message });
      return;
    case 'lag':
      logger.debug(`change-log stream lag: ${notice.bytes} bytes`);
      void lag.report(notice.bytes);
      return;
    case 'warning':
      logger.warn(`change-log stream: ${notice.message}`);
      return;
  }
}

/** Stores pieces of one job's log and supersedes the partials they replace. */
class PieceArchiver {
  private readonly codec: CompressionCodec;
  private readonly isEncrypted: boolean;

  constructor(
    private readonly deps: ArchiverDeps,
    private readonly logger: KernelLogger,
    private readonly plan: RunPlan,
    private readonly storages: StorageInstance[],
    private readonly options: ArchiverOptions,
  ) {
    this.codec = plan.job.compression as CompressionCodec;
    this.isEncrypted = plan.encryption !== null || Boolean(plan.publicKeyEncryption);
  }

  /** Stores `segment` on every destination, retrying with backoff until all hold it (or the signal aborts). */
  async store(segment: ChangeLogSegment): Promise<void> {
    const key = segmentKey({ jobId: this.plan.job.id, timeline: segment.timeline, name: segment.name, partial: segment.partial, codec: this.codec, isEncrypted: this.isEncrypted });
    for (let attempt = 0; ; attempt++) {
      const failure = await this.storeOnce(segment, key);
      if (!failure) break;
      const wait = Math.min(this.options.retry.maxMs, this.options.retry.firstMs * 2 ** attempt);
      this.logger.warn(`${key}: ${failure}; retrying in ${Math.round(wait / 1000)} s (the spool keeps it until every destination holds it)`);
      this.options.onState?.('retrying', failure);
      await delay(wait, undefined, { signal: this.options.signal });
    }
    this.options.onState?.('streaming');
  }

  /** One attempt at every destination; the failure in words, or undefined when all hold the piece and it is recorded. */
  private async storeOnce(segment: ChangeLogSegment, key: string): Promise<string | undefined> {
    let plainBytes = 0;
    let streamed;
    try {
      streamed = await streamBackup({
        dump: createReadStream(segment.path),
        codec: this.codec,
        compression: { level: this.plan.job.compressionLevel ?? null, threads: this.plan.job.compressionThreads ?? null },
        encryptionKey: this.plan.encryption?.key ?? null,
        recipient: this.plan.publicKeyEncryption?.recipient ?? null,
        storages: this.storages,
        key,
        signal: this.options.signal,
        onBytes: (bytes) => (plainBytes = bytes),
      });
    } catch (error) {
      if (this.options.signal.aborted) throw error;
      const detail = error instanceof BackupStreamError ? error.outcomes.filter((o) => !o.ok).map((o) => `${o.storage.name}: ${o.error}`).join('; ') : '';
      return `not stored: ${error instanceof Error ? error.message : String(error)}${detail ? ` (${detail})` : ''}`;
    }
    const failed = streamed.outcomes.filter((outcome) => !outcome.ok);
    if (failed.length > 0) return `not stored on ${failed.map((o) => `${o.storage.name} (${o.error})`).join(', ')}`;
    const superseded = (await this.deps.store.piecesNamed(this.plan.job.id, segment.timeline, segment.name)).filter((piece) => piece.partial && (!segment.partial || piece.storageKey !== key));
    await this.deps.store.savePiece({
      jobId: this.plan.job.id,
      name: segment.name,
      timeline: segment.timeline,
      partial: segment.partial,
      storageKey: key,
      plainSize: plainBytes,
      storedSize: streamed.digests.bytes,
      sha256: streamed.digests.sha256,
      coversUntil: segment.coversUntil,
      archivedAt: new Date(),
      destinations: this.storages.map((storage) => storage.configId),
    });
    for (const piece of superseded) {
      for (const storage of this.storages.filter((s) => piece.destinations.includes(s.configId))) {
        // A leftover partial next to its newer piece is harmless (restores take the newest); it is logged, not retried.
        await storage.adapter.delete(piece.storageKey).catch((error: unknown) => this.logger.warn(`${storage.name}: superseded ${piece.storageKey} not deleted: ${error instanceof Error ? error.message : String(error)}`));
      }
    }
    await this.deps.store.deletePieces(superseded.flatMap((piece) => (piece.id === undefined ? [] : [piece.id])));
    this.logger.debug(`${key}: ${plainBytes} bytes stored as ${streamed.digests.bytes} on ${this.storages.length} destination(s)`);
    return undefined;
  }
}
