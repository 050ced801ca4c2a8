import { Transform, type TransformCallback } from 'node:stream';
import { quoteIdentifier } from './connection.js';

/** Lines longer than this cannot be one of the statements we rewrite; they pass through unbuffered. */
const CANDIDATE_LIMIT = 4096;
const PREFIXES = ['CREATE DATABASE ', 'USE ', '-- Current Database: '];

/**
 * Renames databases in a `--databases` script: rewrites the line-anchored `CREATE DATABASE`, `USE` and
 * `-- Current Database:` lines mariadb-dump writes for each database. Data lines (INSERT ...) never start with
 * these words, and they may be very long, so only short candidate lines are ever buffered.
 */
export class DatabaseRename extends Transform {
  private pending = '';
  private isPassingThrough = false;

  constructor(private readonly mapping: Readonly<Record<string, string>>) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    let offset = 0;
    while (offset < chunk.length) {
      const newline = chunk.indexOf(0x0a, offset);
      const end = newline === -1 ? chunk.length : newline + 1;
      const piece = chunk.subarray(offset, end);
      offset = end;
      if (this.isPassingThrough) {
        this.push(piece);
      } else {
        this.pending += piece.toString('latin1');
        if (!this.isCandidate(this.pending)) {
          this.push(Buffer.from(this.pending, 'latin1'));
          this.pending = '';
          this.isPassingThrough = newline === -1;
          continue;
        }
        if (newline !== -1) this.flushLine();
      }
      if (newline !== -1) this.isPassingThrough = false;
    }
    callback();
  }

  override _flush(callback: TransformCallback): void {
    if (this.pending) this.flushLine();
    callback();
  }

  private isCandidate(text: string): boolean {
    if (text.length > CANDIDATE_LIMIT) return false;
    return PREFIXES.some((prefix) => prefix.startsWith(text.slice(0, prefix.length)) && (text.length < prefix.length || text.startsWith(prefix)));
  }

  private flushLine(): void {
    // latin1 keeps bytes as they are; identifiers are compared in their UTF-8 byte form.
    let line = this.pending;
    this.pending = '';
    rename: for (const [from, to] of Object.entries(this.mapping)) {
      const before = Buffer.from(quoteIdentifier(from), 'utf8').toString('latin1');
      const after = Buffer.from(quoteIdentifier(to), 'utf8').toString('latin1');
      for (const prefix of PREFIXES) {
        const probe = prefix === 'CREATE DATABASE ' ? `${prefix}/*!32312 IF NOT EXISTS*/ ${before}` : `${prefix}${before}`;
        if (line.startsWith(probe)) {
          // One rename per line: a mapping a->b, b->c must not turn a into c.
          line = probe.replace(before, after) + line.slice(probe.length);
          break rename;
        }
      }
    }
    this.push(Buffer.from(line, 'latin1'));
  }
}
