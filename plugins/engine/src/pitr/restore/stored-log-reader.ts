import { createReadStream, createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable, Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { abortablePipeline } from '@holdfast/kernel';
import { CODEC_EXTENSIONS, createDecompressStream, createDecryptStream, parseCompressionCodec, type CompressionCodec } from '../../codec/index.js';
import { isAgeEncryption } from '../../codec/age/index.js';
import { ChecksumGate, RESTORE_INPUT_BUFFER_BYTES } from '../../restore/restore-run.js';
import type { StorageInstance } from '../../run/adapters.js';
import { messageOf } from '../../run/outcome.js';
import { ENCRYPTED_EXTENSION } from '../../run/file-name.js';
import { readSidecar } from '../../run/sidecar.js';
import type { ArchivedPiece, ChangeLogStore, RecordedBase } from '../change-log-store.js';

/** What reading a job's stored base backups and log needs. */
export interface StoredLogDeps {
  /** The job's destinations in the order to try them (priority, or the one the request named). */
  storages: StorageInstance[];
  store: ChangeLogStore;
  jobId: string;
  /** The AES key of a profile (the base's sidecar names it). */
  encryptionKey(profileId: string): Promise<Buffer>;
  /** The key of the job's log pieces (they have no sidecar: the job's current profile encrypted them). */
  logKey: Buffer | null;
  signal: AbortSignal;
  warn(message: string): void;
}

/**
 * The base backup's plain stream (download -> SHA-256 check -> decrypt -> decompress) from the first destination
 * that holds it and opens; a destination that fails to open is skipped for the next. A failure after the first
 * bytes fails the restore (the restore has already unpacked part of it).
 */
export async function openStoredBase(deps: StoredLogDeps, base: RecordedBase): Promise<{ stream: Readable; from: StorageInstance }> {
  const holders = deps.storages.filter((storage) => base.destinations.includes(storage.configId));
  if (holders.length === 0) throw new Error(`no destination of the job holds the base backup ${base.storageKey}`);
  const failures: string[] = [];
  for (const storage of holders) {
    try {
      const sidecar = await readSidecar(storage.adapter, base.storageKey, deps.signal);
      if (!sidecar) throw new Error(`"${base.storageKey}" has no .meta.json sidecar; its checksum cannot be verified`);
      if (isAgeEncryption(sidecar.encryption)) throw new Error('the base backup is encrypted with a public-key profile; point-in-time restores of such jobs are not supported yet');
      const profileId = sidecar.encryption?.profileId;
      if (sidecar.encryption && !profileId) throw new Error('the sidecar does not name the encryption profile of the base backup');
      const key = profileId ? await deps.encryptionKey(profileId) : null;
      const codec = parseCompressionCodec(sidecar.compression?.codec ?? 'NONE');
      const download = await storage.adapter.get(base.storageKey, { signal: deps.signal });
      const output = new PassThrough({ highWaterMark: RESTORE_INPUT_BUFFER_BYTES });
      // An error anywhere (checksum, tag, codec) destroys the output with it, so the restore fails on a damaged base.
      abortablePipeline(deps.signal, download, new ChecksumGate(sidecar.sha256), ...(key ? [createDecryptStream({ key })] : []), createDecompressStream(codec), output).catch((error: unknown) => output.destroy(error as Error));
      return { stream: output, from: storage };
    } catch (error) {
      if (deps.signal.aborted) throw error;
      failures.push(`${storage.name}: ${messageOf(error)}`);
      deps.warn(`base backup ${base.storageKey} could not be read from ${storage.name}: ${messageOf(error)}`);
    }
  }
  throw new Error(`the base backup ${base.storageKey} could not be read from any destination (${failures.join('; ')})`);
}

/** The codec a stored piece was written with, read from its key's extensions (`.zst`, `.gz`, ... before `.enc`). */
export function codecOfKey(key: string): { codec: CompressionCodec; isEncrypted: boolean } {
  const isEncrypted = key.endsWith(ENCRYPTED_EXTENSION);
  const plain = isEncrypted ? key.slice(0, -ENCRYPTED_EXTENSION.length) : key;
  const codecs = Object.entries(CODEC_EXTENSIONS) as Array<[CompressionCodec, string]>;
  const found = codecs.filter(([, extension]) => extension !== '' && plain.endsWith(extension)).sort((a, b) => b[1].length - a[1].length)[0];
  return { codec: found ? found[0] : 'NONE', isEncrypted };
}

/** The piece a restore takes for `name`: the completed segment, else the newest partial (the log's last piece). */
export function pieceFor(pieces: ArchivedPiece[], name: string): ArchivedPiece | undefined {
  const named = pieces.filter((piece) => piece.name === name);
  return named.find((piece) => !piece.partial) ?? named.filter((piece) => piece.partial).sort((a, b) => a.coversUntil.getTime() - b.coversUntil.getTime()).pop();
}

/**
 * `fetchSegment` of the contract over the stored log of one timeline: a segment's plain bytes (checked against the
 * SHA-256 recorded when it was archived, decrypted, decompressed), or null when nothing of that name was archived
 * (replay ends there). A segment is read whole before it is handed on, so that a destination failing half-way is
 * replaced by the next one from the segment's start: into memory up to {@link IN_MEMORY_PIECE_BYTES} (a WAL segment,
 * 16 MiB by default), into a temporary file beyond (a MySQL binary log file reaches max_binlog_size, 1 GiB by
 * default), deleted once read or abandoned.
 */
export function segmentFetcher(deps: StoredLogDeps, timeline: number, onFetched?: (piece: ArchivedPiece, from: StorageInstance) => void): (name: string) => Promise<Readable | null> {
  return async (name) => {
    const failures: string[] = [];
    for (let attempt = 0; attempt <= PARTIAL_REREADS; attempt++) {
      const piece = pieceFor(await deps.store.piecesNamed(deps.jobId, timeline, name), name);
      if (!piece) return null;
      const holders = deps.storages.filter((storage) => piece.destinations.includes(storage.configId));
      if (holders.length === 0) failures.push('no destination of the job holds it');
      for (const storage of holders) {
        try {
          const read = piece.plainSize > IN_MEMORY_PIECE_BYTES ? await spillPiece(deps, storage, piece) : Readable.from(await readPiece(deps, storage, piece));
          onFetched?.(piece, storage);
          return read;
        } catch (error) {
          if (deps.signal.aborted) throw error;
          failures.push(`${storage.name}: ${messageOf(error)}`);
          deps.warn(`${piece.storageKey} could not be read from ${storage.name}: ${messageOf(error)}`);
        }
      }
      // The newest partial is rewritten in place while the stream runs, and its row (with the checksum) is updated
      // only once every destination holds the new bytes: a read in between sees new bytes and the old checksum.
      // The row is read again after a pause; a completed segment never changes, so its failure is final.
      if (!piece.partial) break;
      await delay(PARTIAL_REREAD_MS, undefined, { signal: deps.signal });
    }
    throw new Error(`log segment ${name} could not be read from any destination (${failures.join('; ')})`);
  };
}

/** How often the newest partial is read again when it fails (see {@link segmentFetcher}), and the pause between. */
const PARTIAL_REREADS = 3;
const PARTIAL_REREAD_MS = 2_000;

/** Pieces larger than this (plain bytes) are read into a temporary file instead of memory. */
export const IN_MEMORY_PIECE_BYTES = 64 * 1024 * 1024;

async function openPiece(deps: StoredLogDeps, storage: StorageInstance, piece: ArchivedPiece): Promise<Array<Readable | Writable>> {
  const { codec, isEncrypted } = codecOfKey(piece.storageKey);
  if (isEncrypted && !deps.logKey) throw new Error('the piece is encrypted but the job has no encryption key now');
  const download = await storage.adapter.get(piece.storageKey, { signal: deps.signal });
  return [download, new ChecksumGate(piece.sha256), ...(isEncrypted ? [createDecryptStream({ key: deps.logKey! })] : []), createDecompressStream(codec)];
}

/**
 * A large piece, checked, decrypted and decompressed into a private temporary file first; the stream returned reads
 * it and deletes it when closed (read to the end, destroyed, or failed). A failure while writing deletes it at once.
 */
async function spillPiece(deps: StoredLogDeps, storage: StorageInstance, piece: ArchivedPiece): Promise<Readable> {
  const folder = await mkdtemp(join(tmpdir(), 'holdfast-log-piece-'));
  const path = join(folder, 'piece');
  const removeFolder = () => rm(folder, { recursive: true, force: true }).catch(() => undefined);
  try {
    const stages = await openPiece(deps, storage, piece);
    await abortablePipeline(deps.signal, ...stages, createWriteStream(path, { mode: 0o600 }));
  } catch (error) {
    await removeFolder();
    throw error;
  }
  const read = createReadStream(path);
  read.once('close', () => void removeFolder());
  return read;
}

async function readPiece(deps: StoredLogDeps, storage: StorageInstance, piece: ArchivedPiece): Promise<Buffer[]> {
  const stages = await openPiece(deps, storage, piece);
  const chunks: Buffer[] = [];
  const collect = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk);
      callback();
    },
  });
  await abortablePipeline(deps.signal, ...stages, collect);
  return chunks;
}
