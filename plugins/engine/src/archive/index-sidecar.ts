import { pipeline, Readable } from 'node:stream';
import { collectBytes, readIndex, type ArchiveIndex } from '@holdfast/archive';
import { INDEX_SIDECAR_EXTENSION, type StorageAdapter } from '@holdfast/kernel';
import { createDecryptStream, createEncryptStream } from '../codec/index.js';

export { INDEX_SIDECAR_EXTENSION };

// An index of 50,000 files is about 15 MB of JSON; anything far beyond this is not an index we wrote.
const MAX_INDEX_SIDECAR_BYTES = 512 * 1024 * 1024;
const tooLarge = () => new Error(`index sidecar larger than ${MAX_INDEX_SIDECAR_BYTES} bytes; refusing to read it`);
const collect = (stream: NodeJS.ReadableStream) => collectBytes(stream as AsyncIterable<Buffer>, MAX_INDEX_SIDECAR_BYTES, tooLarge);

/**
 * Writes `<key>.index.json`: the archive's index file as is, or sealed (HFENC-encrypted with the backup's key, its
 * own header and nonces) when the backup is encrypted, so paths and sizes never lie on storage in the clear.
 */
export async function writeIndexSidecar(storage: StorageAdapter, key: string, indexFile: Buffer, encryptionKey: Buffer | null, signal?: AbortSignal): Promise<void> {
  const bytes = encryptionKey ? await collect(Readable.from([indexFile]).pipe(createEncryptStream({ key: encryptionKey }))) : indexFile;
  await storage.put(`${key}${INDEX_SIDECAR_EXTENSION}`, Readable.from([bytes]), { signal, size: bytes.length });
}

/** Reads and checks (checksum line, and the HFENC tags when sealed) the index sidecar of `key`. */
export async function readIndexSidecar(storage: StorageAdapter, key: string, encryptionKey: Buffer | null, signal?: AbortSignal): Promise<ArchiveIndex> {
  const raw = await storage.get(`${key}${INDEX_SIDECAR_EXTENSION}`, { signal });
  // Decrypted as it arrives: only the plain index is ever held whole, not the sealed copy as well.
  let sidecar: Buffer;
  if (encryptionKey) {
    const decrypt = createDecryptStream({ key: encryptionKey });
    // pipeline destroys every stream with the first error, so the collection below fails instead of waiting.
    pipeline(raw, decrypt, () => undefined);
    sidecar = await collect(decrypt);
  } else {
    sidecar = await collect(raw);
  }
  return readIndex({ sidecar });
}
