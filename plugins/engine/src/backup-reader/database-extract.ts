import { Transform, type TransformCallback } from 'node:stream';

/** Magic of a PostgreSQL multi-database dump (docs/formats/postgres-multi-dump.md). */
const MAGIC = Buffer.from('HFPGMULTI\n', 'ascii');
const VERSION = 0x01;
const HEADER_BYTES = MAGIC.length + 1;
const FRAME_HEADER_BYTES = 5;
const MAX_FRAME_BYTES = 1024 * 1024;

/**
 * Reads a `.pgdumps` stream and passes on only the `pg_dump -Fc` bytes of one database, so a download of a
 * multi-database backup is a file `pg_restore` takes as is. Errors (not a multi-dump, a corrupt or truncated
 * stream, or a database the archive does not hold) destroy the stream, so a partial dump never looks complete.
 */
export class DatabaseExtractStream extends Transform {
  private pending: Buffer = Buffer.alloc(0);
  private isHeaderRead = false;
  private current: string | null = null;
  private isFound = false;
  private isFinished = false;
  private readonly seen: string[] = [];

  constructor(private readonly database: string) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    try {
      this.drainFrames();
      callback();
    } catch (error) {
      callback(error as Error);
    }
  }

  override _flush(callback: TransformCallback): void {
    if (!this.isFinished) return callback(new Error('the multi-database dump is truncated (no end frame)'));
    if (!this.isFound) return callback(new Error(`the backup holds no database "${this.database}" (it holds: ${this.seen.join(', ') || 'none'})`));
    callback();
  }

  private drainFrames(): void {
    if (!this.isHeaderRead) {
      if (this.pending.length < HEADER_BYTES) return;
      if (!this.pending.subarray(0, MAGIC.length).equals(MAGIC)) throw new Error('not a multi-database dump (bad magic)');
      if (this.pending[MAGIC.length] !== VERSION) throw new Error(`unsupported multi-database dump version ${this.pending[MAGIC.length]}`);
      this.pending = this.pending.subarray(HEADER_BYTES);
      this.isHeaderRead = true;
    }
    while (this.pending.length >= FRAME_HEADER_BYTES) {
      const type = String.fromCharCode(this.pending[0]!);
      const length = this.pending.readUInt32BE(1);
      if (length > MAX_FRAME_BYTES) throw new Error(`corrupt multi-database dump: a frame of ${length} bytes`);
      if (this.pending.length < FRAME_HEADER_BYTES + length) return;
      const payload = this.pending.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + length);
      this.pending = this.pending.subarray(FRAME_HEADER_BYTES + length);
      this.onFrame(type, payload);
    }
  }

  private onFrame(type: string, payload: Buffer): void {
    if (this.isFinished) throw new Error('corrupt multi-database dump: data after the end frame');
    switch (type) {
      case 'D': {
        const { name } = JSON.parse(payload.toString('utf8')) as { name: string };
        this.current = name;
        this.seen.push(name);
        if (name === this.database) this.isFound = true;
        return;
      }
      case 'C':
        if (this.current === null) throw new Error('corrupt multi-database dump: data outside a database');
        // Copy: the payload is a view of `pending`, which later chunks replace.
        if (this.current === this.database) this.push(Buffer.from(payload));
        return;
      case 'E':
        this.current = null;
        return;
      case 'Z':
        this.isFinished = true;
        return;
      default:
        throw new Error(`corrupt multi-database dump: unknown frame type 0x${type.charCodeAt(0).toString(16)}`);
    }
  }
}
