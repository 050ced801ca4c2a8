import { Transform, addAbortSignal, type Readable } from 'node:stream';
import { AdapterError, resolveByteRange, type ByteRange } from '@holdfast/sdk';
import { RCLONE_ORIGIN, exitError } from './errors.js';
import { startRclone } from './process.js';
import type { RcloneSession } from './session.js';

/**
 * Streams `rclone cat` of one object (or an inclusive range, through --offset/--count). The stream ends only after
 * rclone exited with 0 and the byte count matches what was asked for, so a failure midway is an error on the
 * stream, never a silently short restore. Destroying the stream early stops rclone.
 */
export function openRead(
  session: RcloneSession,
  path: string,
  key: string,
  size: number,
  options: { range?: ByteRange; signal?: AbortSignal },
): Readable {
  const { start, end } = resolveByteRange(RCLONE_ORIGIN, key, size, options.range);
  const window = start === undefined || end === undefined ? [] : ['--offset', String(start), '--count', String(end - start + 1)];
  const expected = start === undefined || end === undefined ? size : end - start + 1;
  const run = startRclone(session, ['cat', ...window, '--', path], { signal: options.signal });
  let bytes = 0;
  const output = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      callback(null, chunk);
    },
    flush(callback) {
      run.exited.then(
        (exit) => {
          if (exit.code !== 0) callback(exitError(exit, `cannot read "${key}"`, session.secrets));
          else if (bytes !== expected) callback(new AdapterError(RCLONE_ORIGIN, 'TRANSIENT', `read of "${key}" returned ${bytes} of ${expected} bytes`));
          else callback();
        },
        (error: unknown) => callback(error as Error),
      );
    },
  });
  run.child.stdout!.on('error', (error) => output.destroy(error));
  run.child.stdout!.pipe(output);
  run.exited.catch((error: unknown) => output.destroy(error as Error));
  output.once('close', () => void run.stop());
  return options.signal ? addAbortSignal(options.signal, output) : output;
}
