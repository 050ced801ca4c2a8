import { AgeKeyError, parseAgeIdentity, ValidationError, type AgeIdentity, type StorageAdapter } from '@holdfast/kernel';
import { isDecryptError } from '../encryption/errors.js';
import { findAgeHeaderEnd, openAgeHeader } from './age-format.js';

/** What a sidecar's `encryption` says: an age file (public-key profile) or not. */
export function isAgeEncryption(encryption: unknown): encryption is { format: 'age'; recipient?: string } {
  return typeof encryption === 'object' && encryption !== null && (encryption as { format?: unknown }).format === 'age';
}

/** Parses the private key sent with a request; the 400 names `field` and never quotes the key. */
export function parsePrivateKeyField(text: string, field: string): AgeIdentity {
  try {
    return parseAgeIdentity(text);
  } catch (error) {
    if (!(error instanceof AgeKeyError)) throw error;
    throw new ValidationError(`Invalid request: ${field}: ${error.message}`, [{ path: field, message: error.message }]);
  }
}

/** The 400 of a request for an age backup that came without its private key. */
export function privateKeyRequired(file: string, recipient: string | undefined, field: string): ValidationError {
  const message = `"${file}" is encrypted with a public-key profile${recipient ? ` (recipient ${recipient})` : ''}: the server cannot read it; send the private key (AGE-SECRET-KEY-1...) in ${field}`;
  return new ValidationError(message, [{ path: field, message: 'required to read a backup encrypted with a public-key profile' }]);
}

/**
 * Reads only the age header of the stored object and opens its file key with the identity, so a wrong key answers
 * 400 before anything is queued, changed or streamed. The read stops after the header (at most 64 KiB).
 */
export async function assertAgeKeyOpens(storage: StorageAdapter, file: string, identity: AgeIdentity, field: string, signal?: AbortSignal): Promise<void> {
  const stream = await storage.get(file, { signal });
  let head = Buffer.alloc(0);
  try {
    for await (const piece of stream as AsyncIterable<Buffer>) {
      head = Buffer.concat([head, piece]);
      const end = findAgeHeaderEnd(head);
      if (end >= 0) {
        openAgeHeader(head.subarray(0, end), identity);
        return;
      }
    }
    findAgeHeaderEnd(head);
    throw new ValidationError(`"${file}" is not a complete age file: its header ends early`);
  } catch (error) {
    if (isDecryptError(error)) {
      const message = error.code === 'WRONG_KEY' ? `${field}: ${error.message}` : `"${file}" cannot be decrypted: ${error.message}`;
      throw new ValidationError(message, [{ path: field, message: error.message }]);
    }
    throw error;
  } finally {
    stream.destroy();
  }
}
