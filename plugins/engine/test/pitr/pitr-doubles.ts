// TEST DOUBLES for the point-in-time tests, registered by the tests, never shipped:
// - `source-pitr-double`: a source whose `pointInTime()` streams a change log the TEST writes (there is no real
//   point-in-time source in this package's tests; the PostgreSQL one lives in adapters/source-postgres). Each piece
//   the test emits is written as a file into the spool folder the engine passed and yielded as a segment; a piece is
//   yielded again by the next stream of the same job until `archived()` was called for it (what a real spool does).
//   Its `dump()` is a "base backup": bytes plus `BaseBackupStats.base` as the test sets it.
// - `storage-refusing`: a local-folder destination whose writes fail while `refusing` is set (a destination that is
//   down), counting the attempts.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { AdapterError, defineSourceAdapter, defineStorageAdapter, inject, injectable, TOKENS, z, type DumpOptions, type SourceAdapter, type StorageAdapter, type StorageObjectInfo } from '@holdfast/sdk';
import type { BaseBackupHandle, BaseBackupInfo, BaseBackupStats, ChangeLogNotice, ChangeLogSegment, ChangeLogStream, ChangeLogStreamOptions, PointInTimeSupport } from '@holdfast/kernel';

/** What the test drives and observes of one job's change log (keyed by stream id = job id). */
export class ScriptedLog {
  /** Pieces written to a spool and not yet archived, in order. */
  readonly pending: ChangeLogSegment[] = [];
  readonly archived: Array<{ name: string; partial: boolean; path: string }> = [];
  /** Spool folders streams were opened with, one per open (tells which process streamed). */
  readonly opens: string[] = [];
  readonly closes: string[] = [];
  private wake: (() => void) | undefined;
  private counter = 0;
  private listeners: Array<(notice: ChangeLogNotice) => void> = [];
  spoolDir: string | undefined;

  /** Writes `bytes` into the open stream's spool and yields it as a segment. */
  async emit(piece: { name: string; bytes: Buffer; partial?: boolean; timeline?: number; coversUntil: Date }): Promise<ChangeLogSegment> {
    if (!this.spoolDir) throw new Error('test: no stream is open');
    await mkdir(this.spoolDir, { recursive: true });
    const path = join(this.spoolDir, `${piece.name}${piece.partial ? `.partial.${++this.counter}` : ''}`);
    await writeFile(path, piece.bytes);
    const segment: ChangeLogSegment = { name: piece.name, partial: piece.partial ?? false, timeline: piece.timeline ?? 1, path, size: piece.bytes.length, coversUntil: piece.coversUntil };
    this.pending.push(segment);
    this.wake?.();
    return segment;
  }

  /** Makes the open stream fail as a real one does when the server goes away (its segments throw, `done` rejects). */
  fail(error: Error): void {
    this.failure = error;
    this.wake?.();
  }
  private failure: Error | undefined;

  notice(notice: ChangeLogNotice): void {
    for (const listener of this.listeners) listener(notice);
  }

  open(options: ChangeLogStreamOptions): ChangeLogStream {
    this.spoolDir = options.spoolDir;
    this.opens.push(options.spoolDir);
    this.listeners = [];
    const pending = this.pending;
    const archived = this.archived;
    const closes = this.closes;
    const waitForPiece = () => new Promise<void>((resolve) => (this.wake = resolve));
    const wakeUp = () => this.wake?.();
    let settle!: () => void;
    let reject!: (error: Error) => void;
    const done = new Promise<void>((resolve, fail) => ((settle = resolve), (reject = fail)));
    this.failure = undefined;
    const failureOf = () => this.failure;
    options.signal.addEventListener('abort', () => {
      closes.push(options.spoolDir);
      wakeUp();
      settle();
    }, { once: true });
    async function* segments(): AsyncGenerator<ChangeLogSegment> {
      // Pieces already yielded by this stream; a new stream starts over with whatever is still pending (the spool).
      const yielded = new Set<ChangeLogSegment>();
      while (!options.signal.aborted) {
        const failure = failureOf();
        if (failure) {
          reject(failure);
          throw failure;
        }
        const next = pending.find((segment) => !yielded.has(segment));
        if (next) {
          yielded.add(next);
          yield next;
          continue;
        }
        await waitForPiece();
      }
    }
    return {
      segments: segments(),
      archived: async (segment) => {
        await rm(segment.path, { force: true });
        const index = pending.indexOf(segment);
        if (index >= 0) pending.splice(index, 1);
        archived.push({ name: segment.name, partial: segment.partial, path: segment.path });
      },
      onNotice: (listener) => void this.listeners.push(listener),
      done,
    };
  }
}

/** Scripted logs by job id, and the base backup the next dump reports. */
export const scriptedLogs = new Map<string, ScriptedLog>();
export function scriptedLog(jobId: string): ScriptedLog {
  let log = scriptedLogs.get(jobId);
  if (!log) scriptedLogs.set(jobId, (log = new ScriptedLog()));
  return log;
}
export const nextBase: { info?: BaseBackupInfo; bytes: Buffer } = { bytes: Buffer.from('base backup bytes\n') };
/** Stream ids whose slot the engine dropped (`dropChangeLogStream`), in call order. */
export const droppedStreams: string[] = [];

const pitrConfig = z.object({ pointInTime: z.boolean().default(true) });

@injectable()
class PitrDoubleSource implements SourceAdapter {
  constructor(@inject(TOKENS.AdapterConfig) private readonly config: z.output<typeof pitrConfig>) {}
  async check() {
    return { ok: true, message: 'pitr double' };
  }
  async detectVersion() {
    return { version: '15.0' };
  }
  async listDatabases() {
    return [];
  }
  async dump(_options: DumpOptions): Promise<BaseBackupHandle> {
    const info = nextBase.info;
    if (!info) throw new Error('test: nextBase.info not set');
    const done: Promise<BaseBackupStats> = Promise.resolve({ bytes: nextBase.bytes.length, databases: [], warnings: [], base: info });
    return { stream: Readable.from([nextBase.bytes]), done, extension: '.tar' };
  }
  async restore(): Promise<{ warnings: string[] }> {
    throw new AdapterError('source-pitr-double', 'UNSUPPORTED', 'the test double restores nothing');
  }
  pointInTime(): PointInTimeSupport | null {
    if (!this.config.pointInTime) return null;
    return {
      logKind: 'postgres-wal',
      baseBackup: async () => {
        throw new Error('test double: the engine takes base backups through dump()');
      },
      openChangeLogStream: (options) => scriptedLog(options.streamId).open(options),
      restoreToPoint: async () => {
        throw new Error('test double: no point-in-time restore');
      },
      dropChangeLogStream: async (streamId) => {
        droppedStreams.push(streamId);
      },
    };
  }
}

/** Test-only point-in-time source (see file header). */
export const pitrDoubleSource = defineSourceAdapter({
  id: 'pitr-double',
  displayName: 'Point-in-time source (test double)',
  configSchema: pitrConfig,
  capabilities: { multipleDatabases: false, listDatabases: false, restore: false, fileArchive: false },
  implementation: PitrDoubleSource,
});

const refusingConfig = z.object({ path: z.string() });
/** Set to make every `storage-refusing` write fail; `attempts` counts writes tried. */
export const refusing = { on: false, attempts: 0 };

@injectable()
class RefusingStorage implements StorageAdapter {
  constructor(@inject(TOKENS.AdapterConfig) private readonly config: z.output<typeof refusingConfig>) {}
  async check() {
    return { ok: true, message: 'refusing' };
  }
  async put(key: string, body: Readable) {
    refusing.attempts++;
    if (refusing.on) {
      body.resume();
      throw new AdapterError('storage-refusing', 'TRANSIENT', 'destination unreachable (test double)');
    }
    const path = join(this.config.path, key);
    await mkdir(join(path, '..'), { recursive: true });
    let size = 0;
    body.on('data', (chunk: Buffer) => (size += chunk.length));
    await pipeline(body, createWriteStream(path));
    return { key, size };
  }
  async get(key: string): Promise<Readable> {
    throw new AdapterError('storage-refusing', 'NOT_FOUND', `${key} not found`);
  }
  async *list(): AsyncIterable<StorageObjectInfo> {}
  async stat(key: string): Promise<StorageObjectInfo> {
    throw new AdapterError('storage-refusing', 'NOT_FOUND', `${key} not found`);
  }
  async delete(key: string) {
    await rm(join(this.config.path, key), { force: true });
  }
}

/** Test-only destination that can be switched off (see file header). */
export const refusingStorage = defineStorageAdapter({
  id: 'refusing',
  displayName: 'Refusing destination (test double)',
  configSchema: refusingConfig,
  capabilities: { rangeReads: false, serverChecksum: false, parallelMetadataReads: false, symlinks: false, maxParallelParts: 1 },
  implementation: RefusingStorage,
});
