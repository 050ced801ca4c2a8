import {
  HttpError,
  instantiateAdapter,
  isAdapterError,
  NotFoundError,
  ValidationError,
  type AdapterRegistry,
  type JobCatalog,
  type KernelLogger,
  type ResolvedAdapterConfig,
  type StorageAdapter,
  type StorageCapabilities,
} from '@holdfast/kernel';
import type { DependencyContainer } from 'tsyringe';

/** One configured storage destination, instantiated for one request. */
export interface OpenStorage {
  configId: string;
  name: string;
  adapter: StorageAdapter;
  capabilities: StorageCapabilities;
}

/** Builds storage adapter instances from saved configurations (resolved through the catalog port). */
export class StorageAccess {
  constructor(
    private readonly container: DependencyContainer,
    private readonly catalog: () => JobCatalog,
    private readonly registry: () => AdapterRegistry,
    private readonly logger: KernelLogger,
  ) {}

  /** The saved configuration: 404 for an unknown id, 400 for one that is not a storage destination. */
  async resolve(configId: string): Promise<ResolvedAdapterConfig> {
    let resolved;
    try {
      resolved = await this.catalog().resolveAdapterConfig(configId);
    } catch (error) {
      if ((error as { status?: number }).status === 404) throw new NotFoundError('Storage not found');
      throw error;
    }
    if (resolved.kind !== 'storage') throw new ValidationError(`Adapter configuration "${resolved.name}" is a ${resolved.kind}, not a storage destination`);
    return resolved;
  }

  /** An adapter instance of the destination; the caller disposes it. */
  async open(configId: string): Promise<OpenStorage> {
    const resolved = await this.resolve(configId);
    const { definition } = this.registry().require('storage', resolved.adapterId);
    const adapter = instantiateAdapter(this.container, definition, resolved.config, {
      instanceId: resolved.configId,
      instanceName: resolved.name,
      logger: this.logger.child?.({ adapter: `storage-${resolved.adapterId}`, instance: resolved.configId }) ?? this.logger,
      credentials: resolved.credentials,
      updateCredentials: resolved.updateCredentials,
    }) as StorageAdapter;
    return { configId, name: resolved.name, adapter, capabilities: definition.capabilities as StorageCapabilities };
  }

  /** Runs `work` with an instance and always disposes it. */
  async with<T>(configId: string, work: (storage: OpenStorage) => Promise<T>): Promise<T> {
    const storage = await this.open(configId);
    try {
      return await work(storage);
    } finally {
      await storage.adapter.dispose?.().catch(() => undefined);
    }
  }
}

/**
 * SPEC: a destination that cannot list answers an error, never an empty list. Upstream sign-in failures are 502,
 * everything else that kept us from reading the destination 503 (retrying later may help).
 */
export function unreachableStorage(name: string, error: unknown): HttpError {
  const reason = error instanceof Error ? error.message : String(error);
  const status = isAdapterError(error) && error.code === 'AUTH' ? 502 : 503;
  return new HttpError(status, `Storage "${name}" could not be read: ${reason}`);
}
