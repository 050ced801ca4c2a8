// TEST-ONLY STORAGE DOUBLES for post-upload verification (issue 19 acceptance 3), never shipped. Objects live in
// memory per `bucket` so a test can inspect them and the reads made:
// - `corrupting`: accepts every put and answers success, but stores the data with one byte flipped (a destination
//   that silently stores something else: bit rot, a broken proxy). Sidecars (`.meta.json`) are stored intact.
// - `recording`: stores faithfully and records every `get`, so a test can observe that no read happened.
// - `checksumming`: declares `serverChecksum` and answers `checksum()` from what it stored (a server-side SHA-256,
//   as object stores keep one); its `get` of backup data is recorded too.
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { AdapterError, defineStorageAdapter, inject, injectable, TOKENS, z, type StorageAdapter, type StorageObjectInfo } from '@holdfast/sdk';

const config = z.object({ bucket: z.string().min(1) });

/** The in-memory bucket of each test double, and the keys read back from it. */
export const buckets = new Map<string, { objects: Map<string, { data: Buffer; modifiedAt: Date }>; gets: string[] }>();

export function bucket(name: string) {
  let entry = buckets.get(name);
  if (!entry) buckets.set(name, (entry = { objects: new Map(), gets: [] }));
  return entry;
}

abstract class MemoryStorage implements StorageAdapter {
  constructor(protected readonly name: string) {}
  protected transform(_key: string, data: Buffer): Buffer {
    return data;
  }
  async check() {
    return { ok: true, message: 'memory' };
  }
  async put(key: string, body: Readable) {
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(chunk as Buffer);
    const data = Buffer.concat(chunks);
    bucket(this.name).objects.set(key, { data: this.transform(key, data), modifiedAt: new Date() });
    return { key, size: data.length };
  }
  async get(key: string): Promise<Readable> {
    const store = bucket(this.name);
    store.gets.push(key);
    const object = store.objects.get(key);
    if (!object) throw new AdapterError('storage-memory', 'NOT_FOUND', `${key} not found`);
    return Readable.from([object.data]);
  }
  async *list(prefix: string): AsyncIterable<StorageObjectInfo> {
    for (const [key, object] of bucket(this.name).objects) if (key.startsWith(prefix)) yield { key, size: object.data.length, modifiedAt: object.modifiedAt };
  }
  async stat(key: string): Promise<StorageObjectInfo> {
    const object = bucket(this.name).objects.get(key);
    if (!object) throw new AdapterError('storage-memory', 'NOT_FOUND', `${key} not found`);
    return { key, size: object.data.length, modifiedAt: object.modifiedAt };
  }
  async delete(key: string): Promise<void> {
    bucket(this.name).objects.delete(key);
  }
}

@injectable()
class CorruptingStorage extends MemoryStorage {
  constructor(@inject(TOKENS.AdapterConfig) settings: z.output<typeof config>) {
    super(settings.bucket);
  }
  protected override transform(key: string, data: Buffer): Buffer {
    if (key.endsWith('.meta.json') || data.length === 0) return data;
    const copy = Buffer.from(data);
    copy[Math.floor(copy.length / 2)]! ^= 0x01;
    return copy;
  }
}

@injectable()
class RecordingStorage extends MemoryStorage {
  constructor(@inject(TOKENS.AdapterConfig) settings: z.output<typeof config>) {
    super(settings.bucket);
  }
}

@injectable()
class ChecksummingStorage extends MemoryStorage {
  constructor(@inject(TOKENS.AdapterConfig) settings: z.output<typeof config>) {
    super(settings.bucket);
  }
  async checksum(key: string, algorithm: 'sha256' | 'md5'): Promise<string | null> {
    const object = bucket(this.name).objects.get(key);
    if (!object) throw new AdapterError('storage-memory', 'NOT_FOUND', `${key} not found`);
    return createHash(algorithm).update(object.data).digest('hex');
  }
}

const plain = { rangeReads: false, serverChecksum: false, parallelMetadataReads: true, symlinks: false, maxParallelParts: 1 };

export const corruptingStorage = defineStorageAdapter({ id: 'corrupting', displayName: 'Corrupting destination (test only)', configSchema: config, capabilities: plain, implementation: CorruptingStorage });
export const recordingStorage = defineStorageAdapter({ id: 'recording', displayName: 'Recording destination (test only)', configSchema: config, capabilities: plain, implementation: RecordingStorage });
export const checksummingStorage = defineStorageAdapter({
  id: 'checksumming',
  displayName: 'Server-checksum destination (test only)',
  configSchema: config,
  capabilities: { ...plain, serverChecksum: true },
  implementation: ChecksummingStorage,
});
