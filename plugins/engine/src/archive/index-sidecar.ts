import { pipeline, Readable } from 'node:stream';
import { readIndex, type ArchiveIndex } from '@holdfast/archive';
import { INDEX_SIDECAR_EXTENSION, type IndexFilePieces, type StorageAdapter } from '@holdfast/kernel';
import { createDecryptStream, createEncryptStream } from '../codec/index.js';

export { INDEX_SIDECAR_EXTENSION };

// An index of 50,000 files is about 15 MB of JSON; anything far beyond this is not an index we wrote.
const MAX_INDEX_SIDECAR_BYTES = 512 * 1024 * 1024;
const SIDECAR_PIECE = 256 * 1024;

/**
 * Writes `<key>.index.json`: the archive's index file as is, or sealed (HFENC-encrypted with the backup's key, its
 * own header and nonces) when the backup is encrypted, so paths and sizes never lie on storage in the clear.
 */
export async function writeIndexSidecar(storage: StorageAdapter, key: string, indexFile: Buffer | IndexFilePieces, encryptionKey: Buffer | null, signal?: AbortSignal): Promise<void> {
  const name = `${key}${INDEX_SIDECAR_EXTENSION}`;
  // Piece by piece (a source's pieces are produced as they are read), so no stage here holds a whole copy.
  const plain = Readable.from(Buffer.isBuffer(indexFile) ? pieces(indexFile) : indexFile.chunks());
  if (!encryptionKey) {
    await storage.put(name, plain, { signal, size: indexFile.length });
    return;
  }
  // Encrypted as it is stored: a sealed copy of a 15 MB index is never held next to the plain one.
  const sealed = createEncryptStream({ key: encryptionKey });
  pipeline(plain, sealed, () => undefined);
  try {
    await storage.put(name, sealed, { signal });
  } finally {
    // A put that failed may leave its body unread: destroying it ends the pipeline (and the plain pieces) too.
    if (!sealed.destroyed) sealed.destroy();
  }
}

function* pieces(bytes: Buffer): Generator<Buffer> {
  for (let start = 0; start < bytes.length; start += SIDECAR_PIECE) yield bytes.subarray(start, start + SIDECAR_PIECE);
}

/** Reads and checks (checksum line, and the HFENC tags when sealed) the index sidecar of `key`. */
export async function readIndexSidecar(storage: StorageAdapter, key: string, encryptionKey: Buffer | null, signal?: AbortSignal): Promise<ArchiveIndex> {
  const raw = await storage.get(`${key}${INDEX_SIDECAR_EXTENSION}`, { signal });
  // Decrypted and decoded as it arrives, entry by entry: neither the sealed nor the plain file is ever held whole.
  let plain: Readable = raw;
  if (encryptionKey) {
    const decrypt = createDecryptStream({ key: encryptionKey });
    // pipeline destroys every stream with the first error, so the decoding below fails instead of waiting.
    pipeline(raw, decrypt, () => undefined);
    plain = decrypt;
  }
  try {
    return await readIndex({ sidecar: plain }, { maxIndexBytes: MAX_INDEX_SIDECAR_BYTES });
  } finally {
    // A decode that failed early leaves the rest unread: release the storage's stream.
    if (!raw.destroyed) raw.destroy();
    if (!plain.destroyed) plain.destroy();
  }
}
