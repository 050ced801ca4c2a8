import { Readable } from 'node:stream';
import { AdapterError } from '@holdfast/sdk';
import { ORIGIN } from './connection.js';

/** How mariadb-dump and mysqldump end every dump they finished (comments are on in the dumps Holdfast writes). */
const COMPLETION_LINE = /\n-- Dump completed(?: on [^\n]*)?\s*$/;
/** The last line and some slack: enough to find the completion line at the end. */
const TAIL_BYTES = 512;

/**
 * Passes a Holdfast dump through and, at its end, errors instead of ending when the dump tool's completion line is
 * missing. An SQL script cut at a statement boundary is a valid, shorter script: without this, a truncated backup
 * would restore "successfully". The client may have run every statement by then; the staging schema is dropped.
 */
export function requireCompletionLine(input: Readable): Readable {
  return Readable.from(
    (async function* checked() {
      let tail: Buffer = Buffer.alloc(0);
      for await (const chunk of input) {
        const bytes = chunk as Buffer;
        tail = bytes.length >= TAIL_BYTES ? bytes.subarray(bytes.length - TAIL_BYTES) : Buffer.concat([tail, bytes]).subarray(-TAIL_BYTES);
        yield bytes;
      }
      if (!COMPLETION_LINE.test(tail.toString('latin1'))) {
        throw new AdapterError(ORIGIN, 'CONFIG', 'the backup is truncated: it does not end with the completion line of the dump tool. Nothing was changed.');
      }
    })(),
    { objectMode: false },
  );
}
