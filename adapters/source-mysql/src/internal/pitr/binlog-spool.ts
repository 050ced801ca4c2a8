// The spool folder of one binary log stream, kept between restarts:
//   <spool>/                      mariadb-binlog's output (`--result-file=<spool>/`): the file being written, named as
//                                 on the server, and briefly the one it just completed;
//   <spool>/.ready/               completed files waiting to be archived (hard links: no copy); deleted once archived;
//   <spool>/.snapshots/           frozen, event-aligned copies of the file being written, one per report;
//   <spool>/.holdfast-binlog-stream.json   what the stream must remember (survives a crash, written by rename).
import { constants } from 'node:fs';
import { copyFile, mkdir, readdir, rename, rm, stat, truncate, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ChangeLogSpool } from '@holdfast/sdk';
import { scanEvents, type EventScan } from './binlog-events.js';
import { binlogNumber, byBinlogNumber, isBinlogName } from './binlog-names.js';

/** What the stream remembers across restarts. */
export interface BinlogSpoolState {
  /** Newest completed file handed to `.ready`: the stream resumes with the file after it. */
  lastCompleted?: string;
  /** The newest partial reported, so a restart (which fetches that file again from its start) never reports less. */
  reported?: { name: string; size: number; coversUntil: string };
  /** The mariadb-binlog process of the last run, stopped at the next start if a crash left it running. */
  receiverPid?: number;
}

export class BinlogSpool extends ChangeLogSpool<BinlogSpoolState> {
  constructor(dir: string) {
    super(dir, '.holdfast-binlog-stream.json');
  }

  /** Binary log files in mariadb-binlog's folder, oldest first. */
  async received(): Promise<string[]> {
    return (await readdir(this.dir)).filter(isBinlogName).sort(byBinlogNumber);
  }

  /** Completed files waiting in `.ready`, oldest first. */
  async ready(): Promise<string[]> {
    return (await readdir(this.readyDir)).filter(isBinlogName).sort(byBinlogNumber);
  }

  /** Hands a completed file to `.ready` (a hard link; one left by a crash is fine) and forgets the original. */
  async moveToReady(name: string): Promise<void> {
    await this.linkToReady(name);
    await rm(path.join(this.dir, name), { force: true });
  }

  async removeReceived(name: string): Promise<void> {
    await rm(path.join(this.dir, name), { force: true });
  }

  /**
   * Freezes the file being written: a copy (mariadb-binlog keeps appending to the original) cut after its last whole
   * event. `previous` is an earlier scan of the same file, so only new bytes are walked. Undefined when the file is
   * gone (completed and moved meanwhile) or holds no whole event.
   */
  async snapshot(name: string, sequence: number, previous?: EventScan): Promise<{ path: string; scan: EventScan } | undefined> {
    const target = path.join(this.snapshotDir, `${name}.partial.${sequence}`);
    try {
      await copyFile(path.join(this.dir, name), target, constants.COPYFILE_FICLONE);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    const size = (await stat(target)).size;
    // A previous scan past this copy's end belongs to an earlier, longer write of the file (a restart fetches it again).
    const scan = await scanEvents(target, size, previous && previous.end <= size ? previous : undefined);
    if (scan.events === 0) {
      await rm(target, { force: true });
      return undefined;
    }
    if (scan.end < size) await truncate(target, scan.end);
    return { path: target, scan };
  }

  /** Moves the spool's files aside into `.set-aside-<time>/` (kept for the operator, never archived). */
  async setAside(reason: string): Promise<string> {
    const target = path.join(this.dir, `.set-aside-${new Date().toISOString().replaceAll(':', '-')}`);
    await mkdir(target, { recursive: true, mode: 0o700 });
    for (const name of await this.received()) await rename(path.join(this.dir, name), path.join(target, name));
    for (const name of await this.ready()) await rename(path.join(this.readyDir, name), path.join(target, `ready-${name}`));
    await writeFile(path.join(target, 'REASON'), `${reason}\n`);
    return target;
  }

  /** The number of the newest file known to the spool (received or completed), for ordering checks. */
  async newestNumber(): Promise<number | undefined> {
    const names = [...(await this.received()), ...(await this.ready())];
    return names.length === 0 ? undefined : Math.max(...names.map(binlogNumber));
  }
}
