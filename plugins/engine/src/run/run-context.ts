import type { Execution } from '../store/entities.js';
import type { ExecutionStore } from '../store/execution-store.js';
import type { ExecutionMetadata } from '../store/metadata.js';
import type { RunLog } from '../store/run-log.js';

/**
 * Metadata writes while streaming are throttled to this interval. Each is a synchronous COMMIT on the main thread
 * with the libsql store (0.69 s of a small-file backup's profile at load 12, at 500 ms); the execution stream polls
 * every 300 ms and the Stuck Job Timeout counts in minutes, so once a second shows the same progress less often.
 */
export const PROGRESS_WRITE_MS = 1000;

/** Stage names (SPEC "What the service does" 2). */
export const STAGES = ['01-initialize', '02-dump', '03-upload', '04-completion', '05-retention'] as const;
/** Stages of a restore run (it has no dump or retention). */
export const RESTORE_STAGES = ['01-initialize', '02-download', '03-restore', '04-completion'] as const;
/** Stages of integrity check and verification runs. */
export const VERIFY_STAGES = ['01-initialize', '02-verify', '03-completion'] as const;
/** Stages of a test restore: a restore, then checks of what arrived, then the scratch is dropped. */
export const TEST_RESTORE_STAGES = ['01-initialize', '02-download', '03-restore', '04-checks', '05-cleanup'] as const;
/** One of the stage lists above. */
export type Stage = (typeof STAGES)[number] | (typeof RESTORE_STAGES)[number] | (typeof VERIFY_STAGES)[number] | (typeof TEST_RESTORE_STAGES)[number];

/**
 * The state one run carries through its stages: the row, its log, its signal, and its metadata, written to the
 * database on every stage change and at most every {@link PROGRESS_WRITE_MS} in between.
 */
export class RunContext {
  readonly metadata: ExecutionMetadata;
  private lastWrite = 0;
  private writing: Promise<void> = Promise.resolve();
  /** Last moment the run made progress (read by the Stuck Job Timeout). */
  lastProgressAt = Date.now();

  constructor(
    readonly execution: Execution,
    readonly store: ExecutionStore,
    readonly log: RunLog,
    readonly signal: AbortSignal,
    initial: ExecutionMetadata,
  ) {
    this.metadata = { ...initial };
  }

  /** Enters a stage: logs it and stores stage and progress at once. */
  async enter(stage: Stage, progress: number): Promise<void> {
    this.log.stage = stage;
    this.metadata.stage = stage;
    this.metadata.progress = Math.max(this.metadata.progress ?? 0, progress);
    this.log.info(`stage ${stage} started`);
    await this.save(true);
  }

  /** Records progress; stored when the throttle allows (or when `force`). */
  progress(progress: number, extra: Partial<ExecutionMetadata> = {}, force = false): void {
    Object.assign(this.metadata, extra);
    this.metadata.progress = Math.min(100, Math.max(this.metadata.progress ?? 0, Math.round(progress)));
    this.lastProgressAt = Date.now();
    if (force || Date.now() - this.lastWrite >= PROGRESS_WRITE_MS) void this.save(true);
  }

  /** Writes the metadata now (serialised, so writes never overtake each other). */
  save(madeProgress = false): Promise<void> {
    this.lastWrite = Date.now();
    const snapshot = { ...this.metadata };
    this.writing = this.writing
      .then(() => this.store.saveMetadata(this.execution.id, snapshot, madeProgress))
      .catch((error: unknown) => this.log.warn(`could not store progress: ${(error as Error).message}`));
    return this.writing;
  }

  /** Waits for pending metadata writes. */
  settle(): Promise<void> {
    return this.writing;
  }
}
