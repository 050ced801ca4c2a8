// The continuous binary log stream of one job (docs/pitr.md, "MySQL and MariaDB"): mariadb-binlog reads the server's
// binary log as a replica would and writes each file into the spool under its server name; this module hands the
// files to the archiver in order: every completed file once, and every flush interval an event-aligned copy of the
// file being written when it grew. It restarts the reader when it exits (a server restart, a network cut), resumes
// with the file it was writing, and reports a gap when the server purged a file the spool never received.
import { stat } from 'node:fs/promises';
import path from 'node:path';
import { AdapterError, ChangeLogNotices, IDLE_REDATE_MS, isIdleRedateDue, type ChangeLogNotice, type ChangeLogSegment, type ChangeLogStream, type ChangeLogStreamOptions } from '@holdfast/sdk';
import type { MysqlSourceConfig } from '../../config.js';
import { ORIGIN } from '../connection.js';
import { scanEvents, type EventScan } from './binlog-events.js';
import { binlogAfter, binlogNumber, formatBinlogPosition } from './binlog-names.js';
import { classifyReceiverExit, receiverError, startBinlogReceiver, stopLeftoverReceiver, type ReceiverRun } from './binlog-receiver.js';
import { serverBinlogs, type ServerBinlog } from './binlog-server.js';
import { BinlogSpool, type BinlogSpoolState } from './binlog-spool.js';
import { replicaServerIdFor, resolveBinlogTool, type BinlogTool } from './binlog-tool.js';
import { topUpCopy } from './binlog-topup.js';

/** How often the spool is looked at for completed files. */
const POLL_MS = 500;
/** Restart backoff of the reader: 1 s doubling to 30 s; a run that streamed a minute resets it. */
const BACKOFF_FIRST_MS = 1000;
const BACKOFF_MAX_MS = 30_000;
const STEADY_RUN_MS = 60_000;
/** Binary logs have no timelines; one series of files is timeline 1 (the engine keys pieces by it). */
const TIMELINE = 1;

/** The contract's options; `idleRedateMs` (tests) replaces {@link IDLE_REDATE_MS}. */
export type BinlogStreamOptions = ChangeLogStreamOptions & { idleRedateMs?: number };

/** Starts the stream at once; it runs until `options.signal` aborts or it fails. */
export function openBinlogStream(config: MysqlSourceConfig, options: BinlogStreamOptions): ChangeLogStream {
  const stream = new BinlogStream(config, options);
  return {
    segments: stream.segments(),
    archived: (segment) => stream.archived(segment),
    onNotice: (listener) => stream.onNotice(listener),
    done: stream.done,
  };
}

class BinlogStream {
  readonly done: Promise<void>;
  private readonly spool: BinlogSpool;
  private readonly replicaServerId: number;
  private tool: BinlogTool | undefined;
  private failure: unknown;
  private readonly notices = new ChangeLogNotices();
  private wake: (() => void) | undefined;
  /** Serialises work on the spool between the segment loop and a (re)start of the reader. */
  /** Pieces to hand out before anything else: the last copy of a file the server purged before it was complete. */
  private readonly queued: ChangeLogSegment[] = [];
  /** The last walk of the file being written (its bytes never change, so the next walk goes on from there). */
  private scanned: { name: string; scan: EventScan } | undefined;
  private hasStarted = false;
  private readonly ready: Promise<void>;

  constructor(
    private readonly config: MysqlSourceConfig,
    private readonly options: BinlogStreamOptions,
  ) {
    this.spool = new BinlogSpool(options.spoolDir);
    this.replicaServerId = replicaServerIdFor(options.streamId);
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

  /** Prepares the spool, then runs the reader again and again until the abort. */
  private async run(markReady: () => void): Promise<void> {
    await this.spool.prepare();
    const state = await this.spool.readState();
    if (await stopLeftoverReceiver(state.receiverPid, this.spool.dir)) {
      this.notify({ type: 'warning', message: `a mariadb-binlog left running by an earlier process (pid ${state.receiverPid}) was stopped` });
    }
    this.tool = await resolveBinlogTool(this.config);
    markReady();
    await this.loop();
  }

  private async loop(): Promise<void> {
    const { signal } = this.options;
    let backoff = BACKOFF_FIRST_MS;
    while (!signal.aborted) {
      let firstLog: string;
      try {
        firstLog = await this.spool.exclusive(() => this.startingFile());
      } catch (error) {
        if (!(error instanceof AdapterError) || error.code !== 'TRANSIENT' || signal.aborted) throw error;
        this.notify({ type: 'warning', message: `starting the binary log stream failed: ${error.message}; retrying in ${backoff / 1000} s` });
        await sleep(backoff, signal);
        backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
        continue;
      }
      if (signal.aborted) break;
      const startedAt = Date.now();
      const { code, stderr } = await this.runReceiverOnce(firstLog);
      if (signal.aborted) break;
      if (Date.now() - startedAt > STEADY_RUN_MS) backoff = BACKOFF_FIRST_MS;
      const kind = classifyReceiverExit(stderr);
      if (kind === 'refused') {
        throw new AdapterError(ORIGIN, 'AUTH', `${this.config.host}:${this.config.port} refused to send its binary log to ${this.config.user}: ${receiverError(this.config, stderr)}`);
      }
      // A purged file is looked at again at once (the next start reports the gap); anything else waits.
      if (kind === 'log-missing') continue;
      this.notify({ type: 'warning', message: `mariadb-binlog stopped (exit ${String(code)}): ${receiverError(this.config, stderr)}; restarting in ${backoff / 1000} s` });
      await sleep(backoff, signal);
      backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    }
  }

  /**
   * Which file the next run starts with, at its first byte: the file the spool was writing (mariadb-binlog --raw
   * writes a file it starts from the beginning, so the bytes it had are fetched again: at most one file), else the
   * one after the newest completed file, else (a new spool) the server's current file. Reports a gap when the server
   * no longer has it, and sets the spool aside when the server's numbering went back (RESET MASTER, another server).
   */
  private async startingFile(): Promise<string> {
    const logs = await serverBinlogs(this.config);
    const oldest = logs[0];
    const newest = logs.at(-1);
    if (!oldest || !newest) throw new AdapterError(ORIGIN, 'CONFIG', `${this.config.host}:${this.config.port} lists no binary log (is log_bin on?)`);
    await this.ingestCompleted();
    let state = await this.spool.readState();
    const received = await this.spool.received();
    let start = received.at(-1);
    if (start !== undefined && state.lastCompleted !== undefined && binlogNumber(start) <= binlogNumber(state.lastCompleted)) {
      await this.spool.removeReceived(start); // completed and handed over just before a crash
      start = undefined;
    }
    start ??= state.lastCompleted === undefined ? undefined : binlogAfter(state.lastCompleted);
    if (start === undefined) return newest.name;
    if (binlogNumber(start) > binlogNumber(newest.name) + 1 || (state.lastCompleted !== undefined && !this.sameSeries(state.lastCompleted, newest))) {
      const folder = await this.spool.setAside(`the server's newest binary log is ${newest.name}, the spool expected ${start} next`);
      state = await this.spool.updateState(() => ({}));
      this.notify({
        type: 'gap',
        message: `the server's binary logs now end at ${newest.name} while the stream expected ${start} next (RESET MASTER, or another server at this address): the spool was moved to ${folder} and the stream starts again with ${newest.name}; take a new base backup`,
        nextAvailable: newest.name,
      });
      return newest.name;
    }
    if (binlogNumber(start) < binlogNumber(oldest.name)) {
      await this.reportPurged(start, state, oldest, received.includes(start));
      return oldest.name;
    }
    // The file after the newest one can only be "next": the server has not opened it yet, so wait on the newest.
    return binlogNumber(start) > binlogNumber(newest.name) ? newest.name : start;
  }

  /** Binary log names of one server share their base name; another base name means another series of files. */
  private sameSeries(name: string, log: ServerBinlog): boolean {
    return name.replace(/\.\d+$/, '') === log.name.replace(/\.\d+$/, '');
  }

  /**
   * The server purged `start` (and maybe more) before the stream had it whole: what the spool holds of it is handed
   * out as its last partial, and the gap is reported up to the oldest file the server still has.
   */
  private async reportPurged(start: string, state: BinlogSpoolState, oldest: ServerBinlog, hasPart: boolean): Promise<void> {
    let lastArchived = state.lastCompleted;
    if (hasPart) {
      const last = await this.partialSnapshot(Date.now());
      if (last) this.queued.push(last);
      await this.spool.removeReceived(start);
      lastArchived = start;
    }
    this.notify({
      type: 'gap',
      message: `the archive has a gap: binary log ${hasPart ? `${start} (received only in part)` : start} up to ${oldest.name} is no longer on the server (purged: PURGE BINARY LOGS, expire_logs_days or binlog_expire_logs_seconds); restores reach instants after the gap only from a base backup taken after it`,
      ...(lastArchived ? { lastArchived } : {}),
      nextAvailable: oldest.name,
    });
  }

  /** One run of the reader; on abort it is asked to stop and waited for. */
  private async runReceiverOnce(firstLog: string): Promise<{ code: number | null; stderr: string }> {
    const { signal } = this.options;
    const receiver: ReceiverRun = await startBinlogReceiver(this.config, this.tool!, this.spool.dir, firstLog, this.replicaServerId);
    await this.spool.updateState((state) => ({ ...state, ...(receiver.pid ? { receiverPid: receiver.pid } : {}) }));
    if (!this.hasStarted) {
      this.hasStarted = true;
      const state = await this.spool.readState();
      const isResumed = state.lastCompleted !== undefined || state.reported !== undefined;
      this.notify({ type: 'started', slot: `replica server_id ${this.replicaServerId}`, ...(isResumed ? { resumedFrom: formatBinlogPosition(firstLog, 4) } : {}) });
    }
    const stop = () => receiver.terminate();
    signal.addEventListener('abort', stop, { once: true });
    if (signal.aborted) stop();
    try {
      return await receiver.exited;
    } finally {
      signal.removeEventListener('abort', stop);
    }
  }

  /**
   * Every file before the newest in the reader's folder is complete (the reader writes one file at a time and opens
   * the next only after the server rotated): those go to `.ready`, and the state remembers the newest of them.
   */
  private async ingestCompleted(): Promise<void> {
    const received = await this.spool.received();
    const state = await this.spool.readState();
    let lastCompleted = state.lastCompleted;
    for (const name of received.slice(0, -1)) {
      if (lastCompleted !== undefined && binlogNumber(name) <= binlogNumber(lastCompleted)) {
        await this.spool.removeReceived(name);
        continue;
      }
      await this.spool.moveToReady(name);
      lastCompleted = name;
    }
    if (lastCompleted !== state.lastCompleted) await this.spool.writeState({ ...(await this.spool.readState()), lastCompleted });
  }

  /** Pieces in log order until the abort; throws the stream's failure. */
  async *segments(): AsyncGenerator<ChangeLogSegment> {
    const { signal, flushIntervalMs } = this.options;
    await this.ready;
    const yielded = new Set<string>();
    let lastPartialAt = Date.now();
    let sequence = Date.now();
    while (true) {
      if (this.failure) throw this.failure;
      if (signal.aborted) return;
      for (const piece of this.queued.splice(0)) yield piece;
      const ready = await this.spool.exclusive(async () => {
        await this.ingestCompleted();
        return this.spool.ready();
      });
      for (const name of ready) {
        if (yielded.has(name)) continue;
        yielded.add(name);
        yield await this.completedSegment(name);
        if (signal.aborted) return;
      }
      if (Date.now() - lastPartialAt >= flushIntervalMs) {
        lastPartialAt = Date.now();
        const partial = await this.spool.exclusive(() => this.partialSnapshot(sequence++));
        if (partial) {
          yield partial;
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

  /**
   * A completed file. Its `coversUntil` is its newest event's time (the Rotate or Stop event that ended it, one-second
   * resolution, so commits of that second after the rotation are never claimed), or the last partial's claim when
   * later (that claim was checked against the server while this file was still the current one).
   */
  private async completedSegment(name: string): Promise<ChangeLogSegment> {
    const file = path.join(this.spool.readyDir, name);
    const { size } = await stat(file);
    const previous = this.scanned?.name === name && this.scanned.scan.end <= size ? this.scanned.scan : undefined;
    const scan = await scanEvents(file, size, previous);
    const state = await this.spool.readState();
    const claimed = state.reported?.name === name ? Date.parse(state.reported.coversUntil) : 0;
    return {
      name,
      partial: false,
      timeline: TIMELINE,
      path: file,
      size,
      endPosition: formatBinlogPosition(name, size),
      coversUntil: new Date(Math.max(scan.newestSeconds * 1000, claimed)),
    };
  }

  /**
   * A frozen copy of the file being written, cut after its last whole event and, when it is behind the server's
   * position, topped up with what the server has beyond it (binlog-topup.ts), when it holds more than the last one
   * reported, or when it is the same as the last one on a server nobody writes to and that one's claim is
   * `idleRedateMs` old (a minute; without it the window's end would stand still on an idle server). Its
   * `coversUntil`: when the copy reaches the server's position read just before it (SHOW BINARY LOGS), every commit
   * before that reading is in it, so the time of the reading; otherwise (behind) just before the newest event's
   * second, since more events of that second may still be on their way.
   */
  private async partialSnapshot(sequence: number): Promise<ChangeLogSegment | undefined> {
    const name = (await this.spool.received()).at(-1);
    if (!name) return undefined;
    const readAt = Date.now();
    const logs = await serverBinlogs(this.config).catch(() => undefined);
    const previous = this.scanned?.name === name ? this.scanned.scan : undefined;
    const snapshot = await this.spool.snapshot(name, sequence, previous);
    if (!snapshot) return undefined;
    this.scanned = { name, scan: snapshot.scan };
    let { end, newestSeconds } = snapshot.scan;
    const current = logs?.at(-1);
    if (current?.name === name && current.size > end) {
      const added = await topUpCopy(this.config, this.tool!, path.join(this.spool.dir, '.topup'), name, end, snapshot.path);
      end += added.bytes;
      newestSeconds = Math.max(newestSeconds, added.newestSeconds);
    }
    const state = await this.spool.readState();
    const reported = state.reported?.name === name ? state.reported : undefined;
    const isCaughtUp = current !== undefined && current.name === name && end >= current.size;
    // Not grown: reported again only on a server nobody writes to (caught up), dated by this reading, once the claim is old.
    const isRedated = reported !== undefined && isCaughtUp && isIdleRedateDue(readAt, Date.parse(reported.coversUntil), readAt, this.options.idleRedateMs ?? IDLE_REDATE_MS);
    if (reported && end <= reported.size && !isRedated) {
      await this.spool.remove(snapshot.path);
      return undefined;
    }
    if (logs) this.reportLag(name, end, logs);
    const claims = [isCaughtUp ? readAt : newestSeconds * 1000 - 1, reported ? Date.parse(reported.coversUntil) : 0];
    const coversUntil = new Date(Math.max(...claims));
    await this.spool.writeState({ ...state, reported: { name, size: end, coversUntil: coversUntil.toISOString() } });
    return { name, partial: true, timeline: TIMELINE, path: snapshot.path, size: end, endPosition: formatBinlogPosition(name, end), coversUntil };
  }

  /** Bytes the server has written beyond what the spool holds (the lag gauge). */
  private reportLag(name: string, end: number, logs: ServerBinlog[]): void {
    const number = binlogNumber(name);
    let bytes = 0;
    for (const log of logs) {
      const at = binlogNumber(log.name);
      if (at === number) bytes += Math.max(0, log.size - end);
      if (at > number) bytes += log.size;
    }
    this.notify({ type: 'lag', bytes });
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
