// The folder a change-log stream (PostgreSQL WAL, MySQL/MariaDB binary logs) keeps between restarts: the receiving
// tool's own output in the folder itself, `.ready/` for completed pieces waiting to be archived (hard links, no copy),
// `.snapshots/` for frozen copies of the piece being written, and a small state file written by rename so a crash
// leaves the old state or the new one. Each source adds what its tool's files need.
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ChangeLogNotice } from '@holdfast/kernel/adapter';

export class ChangeLogSpool<State extends object> {
  readonly readyDir: string;
  readonly snapshotDir: string;
  private readonly stateFile: string;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    readonly dir: string,
    stateFileName: string,
  ) {
    this.readyDir = path.join(dir, '.ready');
    this.snapshotDir = path.join(dir, '.snapshots');
    this.stateFile = path.join(dir, stateFileName);
  }

  /** Creates the folders; snapshots of an earlier run are dropped (the piece being written is copied afresh). */
  async prepare(): Promise<void> {
    await mkdir(this.readyDir, { recursive: true, mode: 0o700 });
    await rm(this.snapshotDir, { recursive: true, force: true });
    await mkdir(this.snapshotDir, { recursive: true, mode: 0o700 });
  }

  /** The remembered state; `{}` before the first write. */
  async readState(): Promise<Partial<State>> {
    try {
      return JSON.parse(await readFile(this.stateFile, 'utf8')) as Partial<State>;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw error;
    }
  }

  /** Written to a temporary file and renamed, so a crash leaves the old state or the new one. */
  async writeState(state: Partial<State>): Promise<void> {
    const temporary = `${this.stateFile}.${randomBytes(4).toString('hex')}`;
    await writeFile(temporary, `${JSON.stringify(state)}\n`, { mode: 0o600 });
    await rename(temporary, this.stateFile);
  }

  async updateState(change: (state: Partial<State>) => Partial<State>): Promise<Partial<State>> {
    const next = change(await this.readState());
    await this.writeState(next);
    return next;
  }

  /** Hard-links the completed piece `name` of the folder into `.ready` (a link left by a crash is fine). */
  async linkToReady(name: string): Promise<void> {
    try {
      await link(path.join(this.dir, name), path.join(this.readyDir, name));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }

  /**
   * Runs `work` after every earlier `exclusive` call settled: the stream's reader, its snapshots and the archiver's
   * `archived()` change the same folders and state file, one at a time.
   */
  exclusive<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work, work);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Deletes a file (an archived piece or snapshot); a missing one is fine. */
  async remove(file: string): Promise<void> {
    await rm(file, { force: true });
  }
}

/**
 * The notices of a change-log stream (`ChangeLogStream.onNotice`): delivered to every listener, and those raised before
 * the first listener (a stream starts at once) kept for it.
 */
export class ChangeLogNotices {
  private readonly listeners: Array<(notice: ChangeLogNotice) => void> = [];
  private readonly unheard: ChangeLogNotice[] = [];

  listen(listener: (notice: ChangeLogNotice) => void): void {
    this.listeners.push(listener);
    for (const notice of this.unheard.splice(0)) listener(notice);
  }

  emit(notice: ChangeLogNotice): void {
    if (this.listeners.length === 0) this.unheard.push(notice);
    for (const listener of this.listeners) listener(notice);
  }
}
