import { addAbortSignal, pipeline, type Readable } from 'node:stream';
import {
  ConflictError,
  NotFoundError,
  ValidationError,
  splitStorageKey,
  type BackupReader,
  type BackupReadOptions,
  type JobCatalog,
  type OpenedBackup,
} from '@holdfast/kernel';
import { CODEC_EXTENSIONS, createDecompressStream, createDecryptStream, parseCompressionCodec, type CompressionCodec } from '../codec/index.js';
import { assertAgeKeyOpens, createAgeDecryptStream, isAgeEncryption, parsePrivateKeyField, privateKeyRequired, type AgeIdentity } from '../codec/age/index.js';
import { disposeAll, type AdapterFactory } from '../run/adapters.js';
import { ENCRYPTED_EXTENSION } from '../run/file-name.js';
import { readSidecar, type ReadSidecar } from '../run/sidecar.js';
import { DatabaseExtractStream } from './database-extract.js';
import { ArchiveInputError, openMember, selectDownloadDump } from '@holdfast/archive';
import { archiveInfoOf } from '../archive/archive-sidecar.js';
import { loadSnapshot, type LoadedSnapshot } from '../archive/snapshot-loader.js';
import { selectArchiveFile } from './archive-file.js';
import type { StorageInstance } from '../run/adapters.js';

/** Extension of a PostgreSQL multi-database dump (docs/formats/postgres-multi-dump.md). */
export const MULTI_DUMP_EXTENSION = '.pgdumps';

function stripSuffix(name: string, suffix: string): string {
  return suffix && name.endsWith(suffix) ? name.slice(0, -suffix.length) : name;
}

/** What a download of `key` turns into, decided from its name and sidecar before any byte is read. */
interface DownloadPlan {
  isEncrypted: boolean;
  shouldDecrypt: boolean;
  codec: CompressionCodec;
  /** The database to cut out of a multi-database dump (decrypted and decompressed). */
  database: string | null;
  fileName: string;
}

/**
 * SPEC download rules: a decrypted download of an encrypted multi-database dump resolves to one database dump (the
 * named one, or the only one); with several and none named it fails with an explanation instead of ciphertext.
 */
export function planDownload(key: string, sidecar: ReadSidecar | null, options: Pick<BackupReadOptions, 'decrypt' | 'database'>): DownloadPlan {
  const name = splitStorageKey(key).name;
  const isEncrypted = Boolean(sidecar?.encryption) || name.endsWith(ENCRYPTED_EXTENSION);
  const codec = parseCompressionCodec(sidecar?.compression?.codec ?? 'NONE');
  const plain = stripSuffix(name, ENCRYPTED_EXTENSION);
  const dumpName = stripSuffix(plain, CODEC_EXTENSIONS[codec]);
  const isMultiDump = dumpName.endsWith(MULTI_DUMP_EXTENSION);
  const databases = Array.isArray(sidecar?.['databases']) ? (sidecar['databases'] as unknown[]).map(String) : [];
  const base = { isEncrypted, codec, shouldDecrypt: isEncrypted && options.decrypt };
  if (options.database !== undefined) {
    if (!isMultiDump) {
      if (databases.length > 0 && !databases.includes(options.database)) {
        throw new ValidationError(`"${name}" holds no database "${options.database}" (it holds: ${databases.join(', ')})`);
      }
      return { ...base, database: null, fileName: base.shouldDecrypt ? plain : name };
    }
    if (isEncrypted && !options.decrypt) throw new ValidationError('a single database can only be taken from an encrypted backup with decrypt=true');
    if (databases.length > 0 && !databases.includes(options.database)) {
      throw new ValidationError(`"${name}" holds no database "${options.database}" (it holds: ${databases.join(', ')})`);
    }
    return { ...base, shouldDecrypt: isEncrypted, database: options.database, fileName: databaseFileName(dumpName, options.database) };
  }
  if (isMultiDump && base.shouldDecrypt) {
    if (databases.length === 1) return { ...base, database: databases[0]!, fileName: databaseFileName(dumpName, databases[0]!) };
    throw new ValidationError(
      `"${name}" holds several databases (${databases.join(', ') || 'names not recorded'}); name one with "database" to download its decrypted dump, or set decrypt=false for the encrypted file`,
    );
  }
  return { ...base, database: null, fileName: base.shouldDecrypt ? plain : name };
}

/** `<backup>-<database>.dump`; path separators in a database name would make a bad file name. */
function databaseFileName(dumpName: string, database: string): string {
  return `${stripSuffix(dumpName, MULTI_DUMP_EXTENSION)}-${database.replace(/[/\\]/g, '_')}.dump`;
}

/** The engine's {@link BackupReader}: storage instance from the catalog, sidecar, then decrypt / split as planned. */
export class EngineBackupReader implements BackupReader {
  constructor(
    private readonly catalog: () => JobCatalog,
    private readonly adapters: () => AdapterFactory,
  ) {}

  /** Reads the snapshot of a seekable archive (and its chain) with the profile key its sidecar names. */
  private async loadArchive(storage: StorageInstance, key: string, sidecar: ReadSidecar, options: BackupReadOptions, what: string): Promise<LoadedSnapshot> {
    if (sidecar.encryption && !options.decrypt) throw new ValidationError(`${what} can only be taken from an encrypted backup with decrypt=true`);
    const profileId = sidecar.encryption?.profileId;
    if (sidecar.encryption && !profileId) throw new Error(`the sidecar of "${key}" does not name its encryption profile; it cannot be decrypted here`);
    const encryptionKey = sidecar.encryption ? await this.catalog().encryptionKey(profileId!) : null;
    return loadSnapshot(storage, key, encryptionKey, options.signal).catch((error: unknown) => {
      if (options.signal?.aborted) throw error;
      // A chain member deleted by hand or an index failing its checks: the storage's state (409, as the listing says).
      throw new ConflictError(`the archive cannot be read: ${(error as Error).message}`);
    });
  }

  /** One database dump out of a seekable archive, read with a range read of its bytes only. */
  private async openArchiveDump(storage: StorageInstance, key: string, sidecar: ReadSidecar, options: BackupReadOptions): Promise<OpenedBackup> {
    const loaded = await this.loadArchive(storage, key, sidecar, options, 'a single database');
    let entry;
    try {
      entry = selectDownloadDump(loaded.snapshot, options.database);
    } catch (error) {
      if (error instanceof ArchiveInputError) throw new ValidationError(`"${splitStorageKey(key).name}": ${error.message}`);
      throw error;
    }
    const stream = openMember(loaded.rangeReaderFor(loaded.snapshot.entries.find((e) => e.path === entry.path)!.archive), entry);
    return handOver(storage, stream, { fileName: archiveDumpFileName(key, entry.database ?? 'database'), size: entry.size, sidecar }, options);
  }

  /**
   * One file out of a seekable archive (`options.path`), read with one range read from whichever backup of the chain
   * holds its bytes; a hard link yields its target's content.
   */
  private async openArchiveFile(storage: StorageInstance, key: string, sidecar: ReadSidecar, options: BackupReadOptions & { path: string }): Promise<OpenedBackup> {
    const loaded = await this.loadArchive(storage, key, sidecar, options, 'a single file');
    const { member, fileName, size } = selectArchiveFile(loaded.snapshot, options.path, splitStorageKey(key).name);
    const stream = openMember(loaded.rangeReaderFor(member.archive), member);
    return handOver(storage, stream, { fileName, size, sidecar }, options);
  }

  /**
   * A decrypted read of a public-key (age) backup needs `privateKey`, checked against the backup's header before any
   * byte is streamed; a key sent for any other read is refused rather than silently ignored.
   */
  private async ageIdentityFor(storage: StorageInstance, key: string, sidecar: ReadSidecar | null, shouldDecrypt: boolean, options: BackupReadOptions): Promise<AgeIdentity | null> {
    const isAge = isAgeEncryption(sidecar?.encryption);
    if (!isAge || !shouldDecrypt) {
      if (options.privateKey !== undefined) {
        throw new ValidationError(`privateKey: only a decrypted download of a backup encrypted with a public-key profile takes a private key; "${splitStorageKey(key).name}" is not one`);
      }
      return null;
    }
    if (options.privateKey === undefined) throw privateKeyRequired(splitStorageKey(key).name, (sidecar!.encryption as { recipient?: string }).recipient, 'privateKey');
    const identity = parsePrivateKeyField(options.privateKey, 'privateKey');
    await assertAgeKeyOpens(storage.adapter, key, identity, 'privateKey', options.signal);
    return identity;
  }

  async open(storageConfigId: string, key: string, options: BackupReadOptions): Promise<OpenedBackup> {
    if (options.path !== undefined && options.database !== undefined) {
      throw new ValidationError('name either "path" (one file of a seekable archive) or "database" (one database dump), not both');
    }
    const resolved = await this.catalog().resolveAdapterConfig(storageConfigId);
    if (resolved.kind !== 'storage') throw new NotFoundError('Storage not found');
    const storage = this.adapters().storage(resolved);
    let isHandedOver = false;
    try {
      const info = await storage.adapter.stat(key);
      const sidecar = await readSidecar(storage.adapter, key, options.signal);
      if (options.path !== undefined) {
        if (!archiveInfoOf(sidecar)) {
          throw new ValidationError(`path: "${splitStorageKey(key).name}" is not a seekable archive; only one file of a seekable backup (.hfa, .hfa.enc) can be downloaded on its own`);
        }
        const opened = await this.openArchiveFile(storage, key, sidecar!, { ...options, path: options.path });
        isHandedOver = true;
        return opened;
      }
      if (archiveInfoOf(sidecar) && wantsArchiveMember(sidecar, options)) {
        const opened = await this.openArchiveDump(storage, key, sidecar!, options);
        isHandedOver = true;
        return opened;
      }
      const plan = planDownload(key, sidecar, options);
      const profileId = sidecar?.encryption?.profileId;
      if (plan.shouldDecrypt && !profileId) throw new Error(`the sidecar of "${key}" does not name its encryption profile; it cannot be decrypted here`);
      const identity = await this.ageIdentityFor(storage, key, sidecar, plan.shouldDecrypt, options);
      const encryptionKey = plan.shouldDecrypt && !identity ? await this.catalog().encryptionKey(profileId!) : null;
      const raw = await storage.adapter.get(key, { signal: options.signal });
      const stages: NodeJS.ReadWriteStream[] = [];
      if (encryptionKey) stages.push(createDecryptStream({ key: encryptionKey }));
      if (identity) stages.push(createAgeDecryptStream(identity));
      if (plan.database !== null) stages.push(createDecompressStream(plan.codec), new DatabaseExtractStream(plan.database));
      const stream = stages.length === 0 ? raw : chain(raw, stages);
      if (options.signal) addAbortSignal(options.signal, stream);
      // The storage instance lives as long as its stream: disposing earlier would cut a remote download short.
      stream.once('close', () => void disposeAll([storage.adapter]));
      isHandedOver = true;
      return {
        stream,
        fileName: plan.fileName,
        size: stages.length === 0 ? info.size : undefined,
        sidecar: sidecar as Record<string, unknown> | null,
      };
    } finally {
      if (!isHandedOver) await disposeAll([storage.adapter]);
    }
  }
}

/**
 * SPEC download rules for seekable archives: naming a database takes its dump out of the archive (decrypted), and a
 * decrypted download of an encrypted archive always resolves to one dump. A plain archive without `database` is
 * downloaded as it is stored: it is not ciphertext.
 */
function wantsArchiveMember(sidecar: ReadSidecar | null, options: Pick<BackupReadOptions, 'decrypt' | 'database'>): boolean {
  if (options.database !== undefined) return true;
  return Boolean(sidecar?.encryption) && options.decrypt;
}

/** A member stream as an opened backup: aborted with the signal, and the storage instance disposed when it closes. */
function handOver(storage: StorageInstance, stream: Readable, opened: Omit<OpenedBackup, 'stream' | 'sidecar'> & { sidecar: ReadSidecar }, options: BackupReadOptions): OpenedBackup {
  if (options.signal) addAbortSignal(options.signal, stream);
  stream.once('close', () => void disposeAll([storage.adapter]));
  return { ...opened, stream, sidecar: opened.sidecar as Record<string, unknown> };
}

/** `<backup>-<database>.dump` for a dump taken out of a seekable archive. */
function archiveDumpFileName(key: string, database: string): string {
  const name = stripSuffix(stripSuffix(splitStorageKey(key).name, ENCRYPTED_EXTENSION), '.hfa');
  return `${name}-${database.replace(/[/\\]/g, '_')}.dump`;
}

/** Joins the stages; an error anywhere destroys every stage, so the returned (last) stream errors too. */
function chain(source: Readable, stages: NodeJS.ReadWriteStream[]): Readable {
  const all = [source, ...stages] as unknown as [Readable, ...NodeJS.ReadWriteStream[]];
  return (pipeline as unknown as (...args: unknown[]) => Readable)(...all, () => undefined);
}
