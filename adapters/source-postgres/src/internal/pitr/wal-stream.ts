// The continuous WAL stream of one job (docs/pitr.md, "Continuous WAL archiving"): pg_receivewal on a physical slot
// writes segments into the spool, and this module hands them to the archiver in order: every completed segment
// once, and every flush interval a frozen copy of the segment being written when it grew. It restarts
// pg_receivewal when it exits (a server restart, a network cut), recreates a slot someone dropped, and says so.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { AdapterError, ChangeLogNotices, IDLE_REDATE_MS, isIdleRedateDue, type ChangeLogNotice, type ChangeLogSegment, type ChangeLogStream, type ChangeLogStreamOptions } from '@holdfast/sdk';
import type { PostgresSourceConfig } from '../../config.js';
import { ORIGIN, scrub } from '../connection.js';
import { classifyReceiverExit, receiverError, startReceiver, type ReceiverEvent } from './receiver.js';
import { replicationRefusal, identifyServer } from './replication-client.js';
import { FlushClock } from './flush-clock.js';
import { createSlotIfMissing, dropSlot, endSlotHolder, readFlushSamples, readSlotStatus, slotNameFor } from './slot.js';
import { Spool } from './spool.js';
import { formatLsn, nextSegmentName, parseLsn, parseSegmentName, segmentNameFor, segmentStartLsn } from './wal-names.js';

/** How often the spool is looked at besides pg_receivewal's "finished segment" lines. */
const POLL_MS = 500;
/** How often the slot's lag is read. */
const LAG_INTERVAL_MS = 5000;
/** Restart backoff of pg_receivewal: 1 s doubling to 30 s; a run that streamed a minute resets it. */
const BACKOFF_FIRST_MS = 1000;
const BACKOFF_MAX_MS = 30_000;
const STEADY_RUN_MS = 60_000;

/** Drops the slot of a stream (the job stops archiving); a missing slot is not an error. */
export async function dropWalStreamSlot(config: PostgresSourceConfig, streamId: string): Promise<void> {
  await dropSlot(config, slotNameFor(streamId));
}

/** The contract's options; `idleRedateMs` (tests) replaces {@link IDLE_REDATE_MS}. */
export type WalStreamOptions = ChangeLogStreamOptions & { idleRedateMs?: number };

/** Starts the stream at once; it runs until `options.signal` aborts or it fails. */
export function openWalStream(config: PostgresSourceConfig, options: WalStreamOptions): ChangeLogStream {
  const stream = new WalStream(config, options);
  return {
    segments: stream.segments(),
    archived: (segment) => stream.archived(segment),
    onNotice: (listener) => stream.onNotice(listener),
    done: stream.done,
  };
}

class WalStream {
  readonly done: Promise<void>;
  private readonly slot: string;
  private readonly spool: Spool;
  private segmentSize = 0;
  private failure: unknown;
  private readonly notices = new ChangeLogNotices();
  private wake: (() => void) | undefined;
  /** Serialises work on the spool between the segment loop and a gap (which clears pg_receivewal's directory). */
  private pendingGap: { lastArchived?: string; reason: string } | undefined;
  private hasStarted = false;
  private ready: Promise<void>;
  /** Dates the pieces: which instant each one covers (set up with the spool's state). */
  private clock = new FlushClock();

  constructor(
    private readonly config: PostgresSourceConfig,
    private readonly options: WalStreamOptions,
  ) {
    this.slot = slotNameFor(options.streamId);
    this.spool = new Spool(options.spoolDir);
    let markReady!: () => void;
    this.ready = new Promise((resolve) => (markReady = resolve));
    this.done = this.run(markReady).catch((error: unknown) => {
      this.failure = error;
      markReady();
      this.poke();
      throw error;
    });
    this.done.catch(() => undefined);
  }

  onNotice(listener: (notice: ChangeLogNotice) => void): void {
    this.notices.listen(listener);
  }

  private notify(notice: ChangeLogNotice): void {
    this.notices.emit(notice);
  }

  private poke(): void {
    this.wake?.();
  }

  /**
   * Runs `step` again, with backoff and a warning each time, while it fails for a passing reason (TRANSIENT: the
   * server restarting or unreachable); other failures (AUTH, CONFIG) are thrown. Undefined when aborted meanwhile.
   */
  private async untilDone<T>(what: string, step: () => Promise<T>): Promise<T | undefined> {
    const { signal } = this.options;
    let backoff = BACKOFF_FIRST_MS;
    for (;;) {
      try {
        return await step();
      } catch (error) {
        if (!(error instanceof AdapterError) || error.code !== 'TRANSIENT' || signal.aborted) throw error;
        this.notify({ type: 'warning', message: `${what} failed: ${error.message}; retrying in ${backoff / 1000} s` });
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
        if (signal.aborted) return undefined;
      }
    }
  }

  /** Sets up the spool and the slot, then runs pg_receivewal again and again until the abort. */
  private async run(markReady: () => void): Promise<void> {
    await this.spool.prepare();
    const isSetUp = await this.untilDone('starting the WAL stream', () => this.setUp());
    markReady();
    if (!isSetUp) return;
    const lagTimer = this.watchLag();
    try {
      await this.loop();
    } finally {
      clearInterval(lagTimer);
      this.poke();
    }
  }

  /** Reads the server, checks the spool belongs to it, and makes sure the slot exists. */
  private async setUp(): Promise<true> {
    const server = await identifyServer(this.config);
    this.segmentSize = server.walSegmentSize;
    let state = await this.spool.readState();
    if (state.systemId !== undefined && state.systemId !== server.systemId) {
      // The server at this address is another one (rebuilt, restored): its WAL does not continue the spool's.
      const folder = await this.spool.setAsideForeign(state.systemId);
      await this.spool.writeState({ systemId: server.systemId });
      this.notify({
        type: 'warning',
        message: `the spool held WAL of another server (system identifier ${state.systemId}, now ${server.systemId}); it was moved to ${folder} and the stream starts afresh: take a new base backup`,
      });
      state = {};
    }
    // The spool remembers the slot it streamed from: a slot that is gone now was dropped behind Holdfast's back.
    if ((await createSlotIfMissing(this.config, this.slot)) && state.slot === this.slot) this.slotWasMissing('the replication slot was dropped while the stream was stopped');
    await this.spool.writeState({ ...state, slot: this.slot, systemId: server.systemId });
    this.clock = new FlushClock(state.coveredUntil);
    await this.readFlushClock(true);
    return true;
  }

  /**
   * One reading of the server's insert position for the clock (and, at set-up, the last checkpoint's start, which
   * dates the WAL the slot reserved before it). A failed reading is skipped: the pieces are dated by earlier ones.
   */
  private async readFlushClock(withCheckpoint = false): Promise<void> {
    try {
      const { now, checkpoint } = await readFlushSamples(this.config, this.segmentSize);
      if (withCheckpoint && checkpoint) this.clock.record(checkpoint);
      if (now) this.clock.record(now);
    } catch {
      // The server is restarting or unreachable; pg_receivewal's own exit reports that.
    }
  }

  /**
   * What a piece ending at `endLsn` covers, remembered in the spool so a restarted stream never claims less. Call it
   * inside the spool's exclusive section: it rewrites the spool's state.
   */
  private async coveredUntil(endLsn: bigint): Promise<Date | undefined> {
    const before = this.clock.lastClaim;
    const covered = this.clock.coveredAt(endLsn);
    if (covered === undefined) return undefined;
    if (covered !== before) await this.spool.writeState({ ...(await this.spool.readState()), coveredUntil: covered });
    return new Date(covered);
  }

  /** Runs pg_receivewal again and again until the abort, repairing the slot or the spool when its exit asks for it. */
  private async loop(): Promise<void> {
    const { signal } = this.options;
    let backoff = BACKOFF_FIRST_MS;
    let lastKind: string | undefined;
    while (!signal.aborted) {
      const startedAt = Date.now();
      const { code, stderr } = await this.runReceiverOnce();
      if (signal.aborted) break;
      if (Date.now() - startedAt > STEADY_RUN_MS) backoff = BACKOFF_FIRST_MS;
      const kind = classifyReceiverExit(stderr);
      // A slot or gap repair is tried at once; the same failure right after it waits like any other.
      if (kind === lastKind && kind !== 'transient') {
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
        if (signal.aborted) break;
      }
      lastKind = kind;
      if (kind === 'refused') throw await replicationRefusal(this.config, new Error(receiverError(this.config, stderr)));
      if (kind === 'slot-missing') {
        const created = await this.untilDone('recreating the replication slot', () => createSlotIfMissing(this.config, this.slot));
        if (created) this.slotWasMissing('the replication slot was dropped while the stream ran');
        continue;
      }
      if (kind === 'slot-busy') {
        await this.untilDone('freeing the replication slot', () => this.freeSlot());
        continue;
      }
      if (kind === 'wal-removed') {
        await this.untilDone('restarting the stream after a gap', () => this.startAfterGap(receiverError(this.config, stderr)));
        continue;
      }
      this.notify({ type: 'warning', message: `pg_receivewal stopped (exit ${String(code)}): ${receiverError(this.config, stderr)}; restarting in ${backoff / 1000} s` });
      await sleep(backoff, signal);
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    }
  }

  /** One pg_receivewal run; on abort it is asked to stop (SIGTERM) and waited for. */
  private async runReceiverOnce(): Promise<{ code: number | null; stderr: string }> {
    const { signal } = this.options;
    const receiver = await startReceiver(this.config, this.spool.dir, this.slot, (event) => this.onReceiverEvent(event));
    const stop = () => void receiver.terminate?.();
    signal.addEventListener('abort', stop, { once: true });
    if (signal.aborted) stop();
    try {
      const code = await receiver.exited;
      return { code, stderr: receiver.stderrTail() };
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }

  private onReceiverEvent(event: ReceiverEvent): void {
    if (event.type === 'segment-finished') {
      this.poke();
      return;
    }
    if (!this.hasStarted) {
      this.hasStarted = true;
      this.notify({ type: 'started', slot: this.slot, resumedFrom: event.lsn });
    }
    if (this.pendingGap) {
      const { lastArchived, reason } = this.pendingGap;
      this.pendingGap = undefined;
      const nextAvailable = segmentNameFor(parseLsn(event.lsn), event.timeline, this.segmentSize);
      const after = lastArchived ? `after segment ${lastArchived}` : 'before this point';
      this.notify({
        type: 'gap',
        message: `the archive has a gap: WAL ${after} up to segment ${nextAvailable} is no longer on the server (${reason}); restores reach instants after the gap only from a base backup taken after it`,
        ...(lastArchived ? { lastArchived } : {}),
        nextAvailable,
      });
    }
  }

  /**
   * The slot is held by another connection although this stream holds the job's lease: a stale stream, such as the
   * pg_receivewal of a Holdfast process that was killed, which goes on streaming into the spool unsupervised. Its
   * WAL sender is ended so this stream takes the slot over (where it left off: the spool is the same, or the slot's
   * position is); a holder that cannot be ended is reported and tried again after the backoff.
   */
  private async freeSlot(): Promise<void> {
    const outcome = await endSlotHolder(this.config, this.slot);
    if (outcome.ended) {
      this.notify({ type: 'warning', message: `the replication slot "${this.slot}" was held by a stale stream (WAL sender PID ${outcome.pid}, for example the pg_receivewal of a Holdfast process that was killed); its connection was ended and this stream takes the slot over` });
    } else if (outcome.pid !== undefined) {
      this.notify({ type: 'warning', message: `the replication slot "${this.slot}" is held by another connection (WAL sender PID ${outcome.pid}) that could not be ended: ${outcome.reason}; end it on the server (SELECT pg_terminate_backend(${outcome.pid})) if no other Holdfast streams this job` });
    }
  }

  private slotWasMissing(when: string): void {
    this.notify({ type: 'slot-missing', slot: this.slot, message: `${when}; Holdfast created "${this.slot}" again (WAL the server removed meanwhile is lost)` });
  }

  /**
   * The server no longer has the WAL pg_receivewal wants to resume from. Completed segments are handed to `.ready`
   * first (they are whole and still get archived); then pg_receivewal's directory is emptied and the slot replaced,
   * so the next run starts where the new slot is, and the gap is reported when it does.
   */
  private async startAfterGap(serverMessage: string): Promise<void> {
    await this.spool.exclusive(async () => {
      await this.ingestCompleted();
      // The slot is replaced, not kept: a fresh one reserves WAL from the last checkpoint on, which the server has.
      // The old one may point at the removed WAL (invalidated, or moved back by pg_receivewal's first status report
      // of the failed run, which names the position it asked for), and pg_receivewal would ask for it again.
      await dropSlot(this.config, this.slot);
      await createSlotIfMissing(this.config, this.slot);
      const partial = await this.spool.partialInReceiveDir();
      if (partial) await this.spool.removeFromReceiveDir(`${partial}.partial`);
      for (const name of await this.spool.completedInReceiveDir()) await this.spool.removeFromReceiveDir(name);
      const state = await this.spool.readState();
      this.pendingGap = { ...(state.lastCompleted ? { lastArchived: state.lastCompleted } : {}), reason: scrub(serverMessage, this.config) };
    });
  }

  /** Every few seconds: the slot's lag in bytes, and a warning (once) when nothing caps what the slot holds back. */
  private watchLag(): NodeJS.Timeout {
    let warned = false;
    let reading = false;
    const tick = () => {
      if (reading) return;
      reading = true;
      readSlotStatus(this.config, this.slot)
        .then((status) => {
          if (status.restartLsn !== undefined) this.notify({ type: 'lag', bytes: Number(status.currentLsn - status.restartLsn) });
          if (!warned && status.maxSlotWalKeepSize === '-1') {
            warned = true;
            this.notify({
              type: 'warning',
              message: `max_slot_wal_keep_size is -1 on ${this.config.host}:${this.config.port}: if the WAL stream stops, the slot "${this.slot}" keeps WAL until the server's disk is full; set it (for example 50GB) and reload PostgreSQL`,
            });
          }
        })
        .catch(() => undefined) // a failed reading is retried at the next tick; the stream itself reports outages
        .finally(() => (reading = false));
    };
    // The first reading at once, so the gauge has a value as soon as the stream runs.
    tick();
    const timer = setInterval(tick, LAG_INTERVAL_MS);
    timer.unref();
    return timer;
  }

  /**
   * Completed segments pg_receivewal wrote since the last look go to `.ready`; the newest stays in its directory as
   * the point it resumes after, older ones are removed there (their `.ready` link keeps them until archived).
   */
  private async ingestCompleted(): Promise<void> {
    const state = await this.spool.readState();
    const completed = await this.spool.completedInReceiveDir();
    let lastCompleted = state.lastCompleted;
    for (const name of completed) {
      if (lastCompleted !== undefined && name <= lastCompleted) continue;
      await this.spool.moveToReady(name);
      lastCompleted = name;
    }
    if (lastCompleted !== state.lastCompleted) await this.spool.writeState({ ...state, lastCompleted });
    for (const name of completed.slice(0, -1)) await this.spool.removeFromReceiveDir(name);
  }

  /** Segments in log order until the abort; throws the stream's failure. */
  async *segments(): AsyncGenerator<ChangeLogSegment> {
    const { signal, flushIntervalMs } = this.options;
    await this.ready;
    const yielded = new Set<string>();
    let lastPartial: { name: string; dataEnd: number } | undefined;
    let lastPartialAt = Date.now();
    let sequence = Date.now();
    while (true) {
      if (this.failure) throw this.failure;
      if (signal.aborted) return;
      const ready = await this.spool.exclusive(async () => {
        await this.ingestCompleted();
        return this.spool.ready();
      });
      for (const [index, name] of ready.entries()) {
        if (yielded.has(name)) continue;
        yielded.add(name);
        // A fresh reading for the newest completed segment: after a WAL switch on a quiet server (a base backup ends
        // with one) nothing follows it, the server's insert position is its end, and it covers up to now. Older ones
        // (a catch-up) are dated by earlier readings, without a query each.
        if (index === ready.length - 1) await this.readFlushClock();
        yield await this.completedSegment(name);
        if (signal.aborted) return;
      }
      if (Date.now() - lastPartialAt >= flushIntervalMs) {
        lastPartialAt = Date.now();
        const partial = await this.spool.exclusive(() => this.partialSnapshot(sequence++, lastPartial));
        if (partial) {
          lastPartial = { name: partial.name, dataEnd: partial.dataEnd };
          yield partial.segment;
          continue;
        }
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, Math.min(POLL_MS, Math.max(50, flushIntervalMs - (Date.now() - lastPartialAt))));
        function done() {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
        this.wake = done;
        signal.addEventListener('abort', done, { once: true });
      });
      this.wake = undefined;
    }
  }

  private async completedSegment(name: string): Promise<ChangeLogSegment> {
    const file = path.join(this.spool.readyDir, name);
    const info = await stat(file);
    const end = segmentStartLsn(nextSegmentName(name, this.segmentSize), this.segmentSize);
    return {
      name,
      partial: false,
      timeline: parseSegmentName(name, this.segmentSize).timeline,
      path: file,
      size: info.size,
      endPosition: formatLsn(end),
      // Not the file's mtime: commits acknowledged just before pg_receivewal finished it may lie in the next segment.
      // Undated (a new spool whose slot reserved WAL the clock has no reading for): the epoch, which claims nothing;
      // the next partial dates the window again.
      coversUntil: (await this.spool.exclusive(() => this.coveredUntil(end))) ?? new Date(0),
    };
  }

  /** A frozen copy of the segment being written, when it holds more than the last one reported. */
  private async partialSnapshot(
    sequence: number,
    last: { name: string; dataEnd: number } | undefined,
  ): Promise<{ name: string; dataEnd: number; segment: ChangeLogSegment } | undefined> {
    const name = await this.spool.partialInReceiveDir();
    if (!name) return undefined;
    // Read before the copy: when pg_receivewal has received up to the server's insert position by the time the copy
    // is taken, the copy covers every commit acknowledged before this reading (flush-clock.ts).
    await this.readFlushClock();
    const snapshot = await this.spool.snapshotPartial(name, sequence, segmentStartLsn(name, this.segmentSize));
    if (!snapshot) return undefined;
    const end = segmentStartLsn(name, this.segmentSize) + BigInt(snapshot.dataEnd);
    const hasGrown = !(last && last.name === name && snapshot.dataEnd <= last.dataEnd);
    // Unchanged on a server nobody writes to: reported again, dated by the fresh reading, once the claim is old.
    const isRedated = !hasGrown && isIdleRedateDue(this.clock.newestReadingAtOrBelow(end), this.clock.lastClaim, Date.now(), this.options.idleRedateMs ?? IDLE_REDATE_MS);
    const coversUntil = hasGrown || isRedated ? await this.coveredUntil(end) : undefined;
    if (!coversUntil) {
      // Not grown since the last report (and not due to be dated again), or no reading dates it yet (pg_receivewal is
      // behind every reading).
      await this.spool.remove(snapshot.path);
      return undefined;
    }
    const segment: ChangeLogSegment = {
      name,
      partial: true,
      timeline: parseSegmentName(name, this.segmentSize).timeline,
      path: snapshot.path,
      size: snapshot.size,
      endPosition: formatLsn(end),
      coversUntil,
    };
    return { name, dataEnd: snapshot.dataEnd, segment };
  }

  /** The archiver stored `segment`: the spool forgets it. */
  async archived(segment: ChangeLogSegment): Promise<void> {
    if (segment.partial) {
      if (path.dirname(segment.path) !== this.spool.snapshotDir) throw new AdapterError(ORIGIN, 'CONFIG', `${segment.path} is not a snapshot of this stream's spool`);
      await this.spool.remove(segment.path);
      return;
    }
    await this.spool.exclusive(() => this.spool.remove(path.join(this.spool.readyDir, segment.name)));
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(finish, ms);
    function finish() {
      clearTimeout(timer);
      signal.removeEventListener('abort', finish);
      resolve();
    }
    signal.addEventListener('abort', finish, { once: true });
  });
}
