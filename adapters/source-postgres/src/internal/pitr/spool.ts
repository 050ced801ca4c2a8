// The spool folder of one WAL stream, kept between restarts:
//   <spool>/                  pg_receivewal's directory: the segment being written (`<name>.partial`) and the newest
//                             completed segment, left there as the anchor pg_receivewal resumes after (it starts at
//                             the segment following the newest complete one in its directory);
//   <spool>/.ready/           completed segments waiting to be archived (hard links: no copy); deleted once archived;
//   <spool>/.snapshots/       frozen copies of the partial segment, one per report; deleted once archived;
//   <spool>/.holdfast-wal-stream.json   the slot and the newest segment moved to .ready (survives a crash).
import { constants } from 'node:fs';
import { copyFile, mkdir, readdir, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { ChangeLogSpool } from '@holdfast/sdk';
import { walDataEnd } from './wal-end.js';
import { isSegmentName } from './wal-names.js';

/** What the stream remembers across restarts. */
export interface SpoolState {
  slot?: string;
  /** The server the spool's WAL came from (`system_identifier`). */
  systemId?: string;
  /** Newest completed segment handed to `.ready` (older ones in pg_receivewal's directory are already handled). */
  lastCompleted?: string;
  /** What the newest reported piece covers (ms since the epoch; flush-clock.ts): a later piece never claims less. */
  coveredUntil?: number;
}

export class Spool extends ChangeLogSpool<SpoolState> {
  constructor(dir: string) {
    super(dir, '.holdfast-wal-stream.json');
  }

  /** Completed segments in pg_receivewal's directory, oldest first. */
  async completedInReceiveDir(): Promise<string[]> {
    return (await readdir(this.dir)).filter(isSegmentName).sort();
  }

  /** The segment being written (`<name>.partial`), or undefined. */
  async partialInReceiveDir(): Promise<string | undefined> {
    const partials = (await readdir(this.dir)).filter((name) => name.endsWith('.partial') && isSegmentName(name.slice(0, -8))).sort();
    return partials.at(-1)?.slice(0, -8);
  }

  /** Segments waiting in `.ready`, oldest first. */
  async ready(): Promise<string[]> {
    return (await readdir(this.readyDir)).filter(isSegmentName).sort();
  }

  /** Hands a completed segment to `.ready` (a hard link; an existing link from before a crash is fine). */
  async moveToReady(name: string): Promise<void> {
    await this.linkToReady(name);
  }

  /** Removes `name` from pg_receivewal's directory (older anchors, the partial before a gap). */
  async removeFromReceiveDir(name: string): Promise<void> {
    await rm(path.join(this.dir, name), { force: true });
  }

  /**
   * Freezes the partial segment: copies it (pg_receivewal keeps writing the original) and finds where its WAL ends
   * (`startLsn`: the segment's first position).
   * Undefined when there is no partial, or it holds no data.
   */
  async snapshotPartial(name: string, sequence: number, startLsn: bigint): Promise<{ path: string; size: number; dataEnd: number } | undefined> {
    const source = path.join(this.dir, `${name}.partial`);
    const target = path.join(this.snapshotDir, `${name}.partial.${sequence}`);
    try {
      await copyFile(source, target, constants.COPYFILE_FICLONE);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined; // completed (renamed) meanwhile
      throw error;
    }
    const size = (await stat(target)).size;
    // The end of the last whole record (wal-end.ts), which is what the server's insert position is compared with.
    const dataEnd = await walDataEnd(target, size, startLsn);
    if (dataEnd === 0) {
      await rm(target, { force: true });
      return undefined;
    }
    return { path: target, size, dataEnd };
  }

  /**
   * Moves everything WAL of the spool (pg_receivewal's files and `.ready`) into `.foreign-<systemId>/`: it came from
   * another server, must not be archived as this one's, and is kept for the operator rather than deleted.
   */
  async setAsideForeign(systemId: string): Promise<string> {
    const target = path.join(this.dir, `.foreign-${systemId}`);
    await mkdir(target, { recursive: true, mode: 0o700 });
    for (const name of await readdir(this.dir)) {
      if (isSegmentName(name) || name.endsWith('.partial') || name.endsWith('.history')) await rename(path.join(this.dir, name), path.join(target, name));
    }
    for (const name of await this.ready()) await rename(path.join(this.readyDir, name), path.join(target, `ready-${name}`));
    return target;
  }
}
