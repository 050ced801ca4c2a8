import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';

/** Hex digests of everything that passed through a {@link HashingPassThrough}. */
export interface StreamDigests {
  sha256: string;
  md5: string;
  bytes: number;
}

/** A pass-through that hashes with SHA-256 and MD5 in one pass; read `digests()` after it ended. */
export class HashingPassThrough extends Transform {
  private readonly sha256: Hash = createHash('sha256');
  private readonly md5: Hash = createHash('md5');
  private bytes = 0;
  private result: StreamDigests | undefined;

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.sha256.update(chunk);
    this.md5.update(chunk);
    this.bytes += chunk.length;
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    this.result = { sha256: this.sha256.digest('hex'), md5: this.md5.digest('hex'), bytes: this.bytes };
    callback();
  }

  /** The digests; throws when the stream has not finished yet (a truncated stream has no digest). */
  digests(): StreamDigests {
    if (!this.result) throw new Error('digests() called before the stream finished');
    return this.result;
  }
}

/** Creates a {@link HashingPassThrough}. */
export function createHashingPassThrough(): HashingPassThrough {
  return new HashingPassThrough();
}
