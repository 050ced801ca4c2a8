import { PassThrough, Transform, type Readable, type TransformCallback } from 'node:stream';
import { AdapterError } from '@holdfast/sdk';
import { SMB_ORIGIN, statusError } from './errors.js';
import { quote } from './paths.js';
import type { Smbclient } from './smbclient.js';

/** Drops the first `skip` bytes, passes `length` bytes, then calls `onDone` once (and drops the rest). */
class ByteWindow extends Transform {
  passed = 0;
  private skipped = 0;
  private isDone = false;

  constructor(
    private readonly skip: number,
    private readonly length: number,
    private readonly onDone: () => void,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    let data = chunk;
    if (this.skipped < this.skip) {
      const drop = Math.min(this.skip - this.skipped, data.length);
      this.skipped += drop;
      data = data.subarray(drop);
    }
    const wanted = this.length - this.passed;
    if (data.length > 0 && wanted > 0) {
      const part = data.length > wanted ? data.subarray(0, wanted) : data;
      this.passed += part.length;
      this.push(part);
    }
    if (this.passed === this.length && !this.isDone) {
      this.isDone = true;
      this.onDone();
    }
    callback();
  }
}

/**
 * Streams `get "<path>" -` from smbclient's stdout (`-E` sends its messages to stderr). smbclient
 * cannot start at an offset, so a range skips the bytes before `start` here and stops smbclient after `end`. The
 * stream ends only after smbclient exited cleanly with every expected byte, so a dropped connection becomes an error,
 * never a silently short object.
 */
export function openDownload(smb: Smbclient, path: string, start: number, end: number): Readable {
  const length = end - start + 1;
  const child = smb.spawn([`get ${quote(path)} -`], { hasDataOut: true });
  const exited = smb.finished(child);
  let isComplete = false;
  const window = new ByteWindow(start, length, () => {
    isComplete = true;
    child.kill('SIGKILL');
  });
  const output = new PassThrough();
  const data = child.stdout;
  data?.on('error', () => undefined); // the kill after a range closes the pipe; the exit status decides
  data?.pipe(window).pipe(output, { end: false });
  const drained = new Promise<void>((resolve) => window.once('end', resolve));
  Promise.all([exited, drained]).then(
    ([run]) => {
      const failure = isComplete ? undefined : run.statuses[0];
      if (failure) output.destroy(statusError(failure, `cannot read ${smb.where}/${path}`));
      else if (window.passed !== length) {
        output.destroy(new AdapterError(SMB_ORIGIN, 'TRANSIENT', `read ${window.passed} of ${length} bytes of ${smb.where}/${path}: the transfer stopped early`));
      } else output.end();
    },
    (error: unknown) => output.destroy(error as Error),
  );
  // A reader that gives up early: stop smbclient.
  output.once('close', () => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  return output;
}
