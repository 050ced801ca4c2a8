// TEST-ONLY: a storage destination that cannot be listed (`storage-unreachable`), standing in for a server that
// refuses our credentials (code AUTH) or cannot be reached (code TRANSIENT). Everything else is the real
// storage-local adapter on a temp directory.
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
