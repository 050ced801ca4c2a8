// Replays the archived binary log into the restored database: each file is fetched from the archive in order and
// streamed into mariadb-binlog's standard input (one file at a time, nothing on disk), which decodes it with the
// original database rewritten to the new one and every other database left out; the SQL goes on into one client
// session (a temporary table made in one file and used in the next needs the same session).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AdapterError, type PointRestoreInput } from '@holdfast/sdk';
import { ORIGIN } from '../connection.js';
import { binlogAfter } from './binlog-names.js';
import { ReplayWatch, type ReplayProgress } from './binlog-replay-watch.js';
import type { BinlogTool } from './binlog-tool.js';

/** Where the replay stops, as mariadb-binlog takes it. */
export type ReplayStop =
  | { type: 'end' }
  /** The first event whose second is `seconds` or later is not replayed, nor anything after it. */
  | { type: 'time'; seconds: number }
  /** Events of `file` that begin at `offset` or later are not replayed, nor any later file. */
  | { type: 'position'; file: string; offset: number };

export interface ReplayPlan {
  tool: BinlogTool;
  /** The base's coordinates: replay starts here. */
  startFile: string;
  startOffset: number;
  stop: ReplayStop;
  /** The database as the log names it, and the one its events go to. */
  original: string;
  into: string;
  /** Databases a statement-based event must not name explicitly (every other one on the server, and `original`). */
  guarded: readonly string[];
  /** Run with --disable-log-bin (the account may turn the session's binary logging off). */
  isOutOfBinlog: boolean;
  fetchSegment: PointRestoreInput['fetchSegment'];
  signal: AbortSignal;
  progress: ReplayProgress;
  onFile?(name: string): void;
}

/** `YYYY-MM-DD HH:MM:SS` of Unix seconds in UTC (mariadb-binlog runs with TZ=UTC). */
export function utcDatetime(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 19).replace('T', ' ');
}

/** mariadb-binlog's arguments for one file, read on its standard input. */
export function decoderArgs(plan: ReplayPlan, name: string, isFirst: boolean): string[] {
  const args = [
    // Nothing from the host's option files: a [mysqlbinlog] group must not change what is replayed.
    '--no-defaults',
    `--rewrite-db=${plan.original}->${plan.into}`,
    // MariaDB's mariadb-binlog filters on the name as logged, before the rewrite (10.11.19, checked by hand and by
    // the tests: the base's other databases never arrive); MySQL's mysqlbinlog filters on the rewritten name.
    `--database=${plan.tool.isMariadb ? plan.original : plan.into}`,
  ];
  if (plan.isOutOfBinlog) args.push('--disable-log-bin');
  // A log that holds GTIDs out of order (a replay logged by someone before, as mysqlbinlog | mysql does) still
  // decodes; the default strict mode stops at the first one.
  if (plan.tool.isMariadb) args.push('--skip-gtid-strict-mode');
  if (isFirst) args.push(`--start-position=${plan.startOffset}`);
  if (plan.stop.type === 'time') args.push(`--stop-datetime=${utcDatetime(plan.stop.seconds)}`);
  if (plan.stop.type === 'position' && plan.stop.file === name) args.push(`--stop-position=${plan.stop.offset}`);
  // Standard input: mariadb-binlog reads the format description at its start, then skips to --start-position.
  args.push('-');
  return args;
}

/** Keeps the last few KiB of the decoder's stderr for its error message. */
function stderrTail(child: ReturnType<typeof spawn>): () => string {
  let tail = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (text: string) => (tail = (tail + text).slice(-4096)));
  return () => tail.trim();
}

const TIMESTAMP_AND_LENGTH = 13;

/**
 * Passes a binary log file through, walking its event headers (timestamp: bytes 0-3, length: 9-12) to learn the
 * newest event time from byte `from` on and the bytes seen: whether the stop time was reached in this file.
 */
export class EventTimes extends Transform {
  newestSeconds = 0;
  bytes = 0;
  private next = 4;
  private header: Buffer = Buffer.alloc(0);

  constructor(private readonly from: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    const chunkStart = this.bytes;
    this.bytes += chunk.length;
    while (this.next + this.header.length < this.bytes) {
      const at = this.next + this.header.length - chunkStart;
      this.header = Buffer.concat([this.header, chunk.subarray(at, at + TIMESTAMP_AND_LENGTH - this.header.length)]);
      if (this.header.length < TIMESTAMP_AND_LENGTH) break;
      const length = this.header.readUInt32LE(9);
      if (this.next >= this.from) this.newestSeconds = Math.max(this.newestSeconds, this.header.readUInt32LE(0));
      // An impossible length (not a binary log): stop walking; mariadb-binlog reports the file itself.
      this.next = length >= 19 ? this.next + length : Number.POSITIVE_INFINITY;
      this.header = Buffer.alloc(0);
    }
    callback(null, chunk);
  }
}

/**
 * Decodes one archived file fed on standard input; yields its SQL through the watch. Throws when mariadb-binlog
 * fails or the archive's stream fails (a file cut short must not end the replay early without a word).
 */
async function* decodeFile(plan: ReplayPlan, name: string, fetched: Readable, times: EventTimes, isFirst: boolean): AsyncGenerator<Buffer> {
  const child = spawn(plan.tool.command, decoderArgs(plan, name, isFirst), {
    // TZ=UTC: --stop-datetime and the event times it prints are read in UTC.
    env: { PATH: process.env.PATH, LANG: 'C.UTF-8', TZ: 'UTC' },
    stdio: ['pipe', 'pipe', 'pipe'],
    signal: plan.signal,
    killSignal: 'SIGKILL',
  });
  const tail = stderrTail(child);
  const closed = new Promise<number | null>((resolve, reject) => {
    child.once('error', reject);
    child.once('close', resolve);
  });
  closed.catch(() => undefined);
  let archiveError: unknown;
  // mariadb-binlog stops reading at the stop event and exits: the rest of the file is not needed. Its input then fails
  // (EPIPE) or closes, and the pipeline below destroys the archive's stream with that error: only an error of the
  // archive's stream from before that is an archive failure (the bench saw "write EPIPE" reported as one).
  let isInputClosed = false;
  child.stdin!.once('error', () => (isInputClosed = true));
  child.stdin!.once('close', () => (isInputClosed = true));
  fetched.once('error', (error) => {
    if (!isInputClosed) archiveError = error;
  });
  const feeding = pipeline(fetched, times, child.stdin!).catch(() => undefined);
  const watch = new ReplayWatch(plan.guarded, plan.progress, plan.isOutOfBinlog);
  child.stdout!.once('error', (error) => watch.destroy(error));
  try {
    for await (const chunk of child.stdout!.pipe(watch)) yield chunk as Buffer;
    const code = await closed;
    await feeding;
    if (archiveError) throw new AdapterError(ORIGIN, 'TRANSIENT', `reading ${name} from the archive failed: ${archiveError instanceof Error ? archiveError.message : String(archiveError)}`);
    if (code !== 0) throw new AdapterError(ORIGIN, 'TRANSIENT', `${path.basename(plan.tool.command)} could not decode ${name} (exit ${String(code)}): ${tail().slice(-1000)}`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await closed.catch(() => undefined);
    }
    fetched.destroy();
  }
}

/**
 * The SQL of the whole replay, file after file: from the base's coordinates until the stop (or the end of the
 * archive). Each file streams from the archive into mariadb-binlog's standard input; nothing is written to disk.
 */
export async function* replaySql(plan: ReplayPlan): AsyncGenerator<Buffer> {
  for (let name = plan.startFile, isFirst = true; ; name = binlogAfter(name), isFirst = false) {
    if (plan.signal.aborted) throw new AdapterError(ORIGIN, 'ABORTED', 'the binary log replay was aborted');
    const stop = plan.stop;
    const fetched = await plan.fetchSegment(name);
    if (!fetched) {
      if (stop.type === 'position') {
        throw new AdapterError(ORIGIN, 'CONFIG', `the archived binary log ends before ${name}: the target position ${stop.file}:${stop.offset} cannot be reached`);
      }
      return;
    }
    plan.onFile?.(name);
    const times = new EventTimes(isFirst ? plan.startOffset : 4);
    yield* decodeFile(plan, name, fetched, times, isFirst);
    const isTargetFile = stop.type === 'position' && stop.file === name;
    if (isTargetFile && times.bytes < stop.offset) {
      throw new AdapterError(ORIGIN, 'CONFIG', `the archived binary log file ${name} ends at byte ${times.bytes}, before the target position ${stop.file}:${stop.offset}`);
    }
    // The stop time reached in this file: mariadb-binlog stopped at its first event of that second or later, and a
    // later file could only hold later events in log order.
    if (isTargetFile || (stop.type === 'time' && times.newestSeconds >= stop.seconds)) return;
  }
}
