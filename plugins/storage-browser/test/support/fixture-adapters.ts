// TEST-ONLY: a storage destination that cannot be listed (`storage-unreachable`), standing in for a server that
// refuses our credentials (code AUTH) or cannot be reached (code TRANSIENT). Everything else is the real
// storage-local adapter on a temp directory.
import { addAbortSignal, Readable } from 'node:stream';
import { AdapterError, defineStorageAdapter, inject, injectable, TOKENS, z, type StorageAdapter, type StorageObjectInfo } from '@holdfast/sdk';

const unreachableConfig = z.object({ code: z.enum(['AUTH', 'TRANSIENT']).default('TRANSIENT') });

@injectable()
class UnreachableStorage implements StorageAdapter {
  constructor(@inject(TOKENS.AdapterConfig) private readonly config: z.output<typeof unreachableConfig>) {}
  private fail(): never {
    throw new AdapterError('storage-unreachable', this.config.code, this.config.code === 'AUTH' ? 'the server rejected the credentials' : 'connection refused');
  }
  async check() {
    return { ok: false, message: 'unreachable' };
  }
  async put(): Promise<never> {
    this.fail();
  }
  async get(): Promise<never> {
    this.fail();
  }
  async *list(): AsyncIterable<StorageObjectInfo> {
    this.fail();
  }
  async stat(): Promise<never> {
    this.fail();
  }
  async delete(): Promise<void> {
    this.fail();
  }
}

export const unreachableStorage = defineStorageAdapter({
  id: 'unreachable',
  displayName: 'Unreachable destination (test only)',
  configSchema: unreachableConfig,
  capabilities: { rangeReads: false, serverChecksum: false, parallelMetadataReads: false, symlinks: false, maxParallelParts: 1 },
  implementation: UnreachableStorage,
});

// TEST-ONLY: a destination whose read stream reports its end a while after its last byte (`storage-late-end`), as
// a network stream does when the connection's closing frame arrives after the payload. Every key holds `size`
// bytes of a fixed pattern (byte i is i % 251).
const lateEndConfig = z.object({ size: z.number().int().positive(), endDelayMs: z.number().int().nonnegative().default(100) });

/** Sidecars do not exist on a `storage-late-end` destination: its backups are plain files. */
const isMetadataKey = (key: string) => key.endsWith('.meta.json') || key.endsWith('.index.json');

/** The bytes every key of a `storage-late-end` destination holds. */
export function lateEndBody(size: number): Buffer {
  const body = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) body[i] = i % 251;
  return body;
}

@injectable()
class LateEndStorage implements StorageAdapter {
  constructor(@inject(TOKENS.AdapterConfig) private readonly config: z.output<typeof lateEndConfig>) {}
  async check() {
    return { ok: true, message: 'late end' };
  }
  async put(): Promise<never> {
    throw new AdapterError('storage-late-end', 'UNSUPPORTED', 'read-only');
  }
  async get(key: string, options: { signal?: AbortSignal } = {}): Promise<Readable> {
    if (isMetadataKey(key)) throw new AdapterError('storage-late-end', 'NOT_FOUND', `"${key}" not found`);
    const body = lateEndBody(this.config.size);
    let offset = 0;
    let timer: NodeJS.Timeout | undefined;
    const stream = new Readable({
      read: () => {
        if (offset < body.length) {
          stream.push(body.subarray(offset, (offset += 64 * 1024)));
          return;
        }
        timer ??= setTimeout(() => stream.push(null), this.config.endDelayMs);
      },
      destroy: (error, callback) => {
        clearTimeout(timer);
        callback(error);
      },
    });
    return options.signal ? addAbortSignal(options.signal, stream) : stream;
  }
  async *list(): AsyncIterable<StorageObjectInfo> {
    yield { key: 'late.dump', size: this.config.size, modifiedAt: new Date(0) };
  }
  async stat(key: string): Promise<StorageObjectInfo> {
    if (isMetadataKey(key)) throw new AdapterError('storage-late-end', 'NOT_FOUND', `"${key}" not found`);
    return { key, size: this.config.size, modifiedAt: new Date(0) };
  }
  async delete(): Promise<void> {}
}

export const lateEndStorage = defineStorageAdapter({
  id: 'late-end',
  displayName: 'Destination whose streams end late (test only)',
  configSchema: lateEndConfig,
  capabilities: { rangeReads: false, serverChecksum: false, parallelMetadataReads: false, symlinks: false, maxParallelParts: 1 },
  implementation: LateEndStorage,
});
