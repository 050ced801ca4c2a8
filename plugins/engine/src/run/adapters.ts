import {
  AdapterError,
  instantiateAdapter,
  REMOTE_SOURCE_RUNNER,
  type AdapterKind,
  type AdapterRegistry,
  type KernelLogger,
  type NamingStrategy,
  type RemoteSourceRunner,
  type ResolvedAdapterConfig,
  type RetentionStrategy,
  type ScratchPlacement,
  type SourceAdapter,
  type StorageAdapter,
  type StorageCapabilities,
} from '@holdfast/kernel';
import type { DependencyContainer } from 'tsyringe';

/** A storage instance with what the engine needs to know about it. */
export interface StorageInstance {
  configId: string;
  name: string;
  adapterId: string;
  adapter: StorageAdapter;
  capabilities: StorageCapabilities;
}

/** Builds configured adapter instances from the registry; each run owns and disposes its instances. */
export class AdapterFactory {
  constructor(
    private readonly container: DependencyContainer,
    private readonly registry: AdapterRegistry,
    private readonly logger: KernelLogger,
  ) {}

  private build<T>(kind: AdapterKind, resolved: Pick<ResolvedAdapterConfig, 'adapterId' | 'config'> & Partial<ResolvedAdapterConfig>): T {
    const { definition } = this.registry.require(kind, resolved.adapterId);
    return instantiateAdapter(this.container, definition, resolved.config, {
      instanceId: resolved.configId,
      instanceName: resolved.name,
      logger: this.logger.child?.({ adapter: `${kind}-${resolved.adapterId}`, instance: resolved.configId }) ?? this.logger,
      credentials: resolved.credentials,
      updateCredentials: resolved.updateCredentials,
    }) as T;
  }

  /**
   * The source's adapter: built here, or, for a source bound to a remote agent (issue 48), one whose every call runs
   * on that agent (the agents plugin's `REMOTE_SOURCE_RUNNER`). The rest of the engine cannot tell them apart.
   */
  source(resolved: ResolvedAdapterConfig, run?: { log: { info(message: string): void; warn(message: string): void } }): SourceAdapter {
    const agentId = resolved.agentId;
    if (!agentId) return this.build<SourceAdapter>('source', resolved);
    if (!this.container.isRegistered(REMOTE_SOURCE_RUNNER, true)) {
      throw new AdapterError(`source-${resolved.adapterId}`, 'CONFIG', `source "${resolved.name}" runs on an agent, but remote agents are not available on this server`);
    }
    const logger = this.logger.child?.({ adapter: `source-${resolved.adapterId}`, instance: resolved.configId, agentId }) ?? this.logger;
    // The agent's adapter log lines go to the run's log when a run asked for the source (issue 48).
    const runLog = run ? (level: 'info' | 'warn', message: string) => run.log[level](message) : undefined;
    return this.container.resolve(REMOTE_SOURCE_RUNNER).source({ ...resolved, agentId }, { logger, ...(runLog ? { runLog } : {}) });
  }

  /** The agents plugin's runner when it is registered (several processes: where an agent's runs must execute). */
  remoteRunner(): RemoteSourceRunner | undefined {
    return this.container.isRegistered(REMOTE_SOURCE_RUNNER, true) ? this.container.resolve(REMOTE_SOURCE_RUNNER) : undefined;
  }

  storage(resolved: ResolvedAdapterConfig): StorageInstance {
    const { definition } = this.registry.require('storage', resolved.adapterId);
    return {
      configId: resolved.configId,
      name: resolved.name,
      adapterId: resolved.adapterId,
      adapter: this.build<StorageAdapter>('storage', resolved),
      capabilities: definition.capabilities as StorageCapabilities,
    };
  }

  /** True when the source adapter's dump is a file archive (a tar of directories), not a database dump. */
  isFileArchive(adapterId: string): boolean {
    const { definition } = this.registry.require('source', adapterId);
    return Boolean((definition.capabilities as { fileArchive?: boolean } | undefined)?.fileArchive);
  }

  /** True when the source adapter declares `capabilities.listDatabases` (its `listDatabases` returns real names). */
  canListDatabases(adapterId: string): boolean {
    const { definition } = this.registry.require('source', adapterId);
    return Boolean((definition.capabilities as { listDatabases?: boolean } | undefined)?.listDatabases);
  }

  /** True when the source adapter writes Holdfast seekable archives (`capabilities.seekableArchive`). */
  isSeekableArchive(adapterId: string): boolean {
    const { definition } = this.registry.require('source', adapterId);
    return Boolean((definition.capabilities as { seekableArchive?: boolean } | undefined)?.seekableArchive);
  }

  /** Where the source adapter puts test restore scratch (`capabilities.scratchRestore`); undefined: it has none. */
  scratchPlacement(adapterId: string): ScratchPlacement | undefined {
    const { definition } = this.registry.require('source', adapterId);
    return (definition.capabilities as { scratchRestore?: ScratchPlacement } | undefined)?.scratchRestore;
  }

  /**
   * The storage destination's config as its adapter reads it (its schema's defaults filled in), for settings the engine
   * needs without building an instance (the retention preview's object lock dates). Undefined when it does not parse.
   */
  storageConfig(resolved: Pick<ResolvedAdapterConfig, 'adapterId' | 'config'>): Record<string, unknown> | undefined {
    const { definition } = this.registry.require('storage', resolved.adapterId);
    const parsed = definition.configSchema.safeParse(resolved.config ?? {});
    return parsed.success && typeof parsed.data === 'object' && parsed.data !== null ? (parsed.data as Record<string, unknown>) : undefined;
  }

  naming(id = 'template'): NamingStrategy {
    return this.build<NamingStrategy>('naming', { adapterId: id, config: {} });
  }

  retention(id: string, config: unknown): RetentionStrategy {
    return this.build<RetentionStrategy>('retention', { adapterId: id, config: config as Record<string, unknown> });
  }
}

/** Disposes instances, ignoring failures (a dispose error must not change a run's outcome). */
export async function disposeAll(instances: Array<{ dispose?: () => Promise<void> } | undefined>): Promise<void> {
  await Promise.all(instances.map((instance) => instance?.dispose?.().catch(() => undefined)));
}
