import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createDecryptStream } from '../codec/index.js';
import type { StorageInstance } from '../run/adapters.js';
import { messageOf } from '../run/outcome.js';

/** How a stored object was checked: the server's checksum, or its bytes read back and hashed here. */
export type VerificationMethod = 'server-checksum' | 'streamed-sha256';

/** What a check of one stored object found. */
export interface ObjectCheck {
  ok: boolean;
  method: VerificationMethod;
  /** SHA-256 of the stored bytes (absent when the server answered with another algorithm or the read failed). */
  sha256?: string;
  /** Bytes read back (0 for a server checksum). */
  bytesRead: number;
  /** Why the object is bad: `missing`, a checksum mismatch, a failed chunk, a read error. */
  problem?: string;
}

/** Options of {@link checkStoredObject}. */
export interface CheckOptions {
  expectedSha256: string;
  /** Also authenticate every HFENC chunk with this profile key (encrypted backups). */
  encryptionKey?: Buffer | null;
  /** Use the destination's own checksum when it declares one (post-upload verification). */
  preferServerChecksum?: boolean;
  signal?: AbortSignal;
  onBytes?: (bytes: number) => void;
}

/** Consumes a stream, hashing what passes, so a read-back never holds more than a buffer in memory. */
class HashSink extends Writable {
  readonly hash = createHash('sha256');
  bytes = 0;
  constructor(private readonly onBytes?: (bytes: number) => void) {
    super();
  }
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    this.onBytes?.(this.bytes);
    callback();
  }
}

/** A sink that drops decrypted bytes: only the authentication of each chunk matters. */
function discard(): Writable {
  return new Writable({ write: (_chunk, _encoding, callback) => callback() });
}

/**
 * Checks one stored object against the SHA-256 recorded for it. With `preferServerChecksum` and a destination that
 * declares `serverChecksum` and answers one, nothing is read; otherwise the object is streamed once, hashed, and (for
 * encrypted backups) run through the HFENC decrypter so every chunk is authenticated. Never throws for a bad object:
 * the answer says what is wrong. Throws only when the signal aborted.
 */
export async function checkStoredObject(storage: StorageInstance, key: string, options: CheckOptions): Promise<ObjectCheck> {
  if (options.preferServerChecksum && storage.capabilities.serverChecksum && storage.adapter.checksum) {
    try {
      const sum = await storage.adapter.checksum(key, 'sha256', { signal: options.signal });
      if (sum) {
        const ok = sum.toLowerCase() === options.expectedSha256;
        return { ok, method: 'server-checksum', sha256: sum.toLowerCase(), bytesRead: 0, ...(ok ? {} : { problem: mismatch(sum.toLowerCase(), options.expectedSha256) }) };
      }
    } catch (error) {
      if (options.signal?.aborted) throw error;
      // A destination that cannot answer its checksum is read back instead.
    }
  }
  const sink = new HashSink(options.onBytes);
  let authError: string | undefined;
  try {
    const body = await storage.adapter.get(key, { signal: options.signal });
    if (options.encryptionKey) {
      // One read feeds both the hash and the decrypter; a failed chunk is recorded, the hash still completes.
      const decrypt = createDecryptStream({ key: options.encryptionKey });
      const authenticating = pipeline(decrypt, discard()).catch((error: unknown) => {
        authError = messageOf(error);
      });
      const tee = new Writable({
        write(chunk: Buffer, _encoding, callback) {
          sink.write(chunk);
          if (authError || decrypt.destroyed) return callback();
          if (decrypt.write(chunk)) return callback();
          // A decrypter that failed never drains: its close ends the wait too.
          const resume = () => {
            decrypt.off('drain', resume);
            decrypt.off('close', resume);
            callback();
          };
          decrypt.on('drain', resume);
          decrypt.on('close', resume);
        },
        final(callback) {
          sink.end();
          decrypt.end();
          callback();
        },
      });
      await pipeline(body, tee, { signal: options.signal });
      await authenticating;
    } else {
      await pipeline(body, sink, { signal: options.signal });
    }
  } catch (error) {
    if (options.signal?.aborted) throw error;
    const missing = (error as { code?: string }).code === 'NOT_FOUND';
    return { ok: false, method: 'streamed-sha256', bytesRead: sink.bytes, problem: missing ? 'missing: the backup file is not on the destination' : `could not be read: ${messageOf(error)}` };
  }
  const sha256 = sink.hash.digest('hex');
  const problems = [
    ...(sha256 === options.expectedSha256 ? [] : [mismatch(sha256, options.expectedSha256)]),
    ...(authError ? [`encryption: ${authError}`] : []),
  ];
  return { ok: problems.length === 0, method: 'streamed-sha256', sha256, bytesRead: sink.bytes, ...(problems.length ? { problem: problems.join('; ') } : {}) };
}

function mismatch(actual: string, expected: string): string {
  return `checksum mismatch: the stored file's SHA-256 is ${actual}, the sidecar records ${expected}`;
}
