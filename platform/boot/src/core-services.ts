import {
  AdapterRegistry,
  EventBus,
  TOKENS,
  type AnyAdapterDefinition,
  type LocalPathPolicy,
  type RuntimeConfig,
} from '@holdfast/kernel';
import pino, { type Logger } from 'pino';
import type { DependencyContainer, InjectionToken } from 'tsyringe';

/**
 * The process-wide services {@link composeHoldfast} registers before any plugin, so every plugin may simply require
 * them. Each has a default, so a test composes with only what it cares about.
 */
export interface CoreServices {
  /** Default: a silent logger. */
  logger?: Logger;
  /**
   * The process settings plugins read through `TOKENS.RuntimeConfig` (the server passes its whole settings object).
   * Fields left out come from the composition: `dataDir`, `databaseUrl`, the HTTP port; version `0.0.0-dev`.
   */
  runtime?: Partial<RuntimeConfig>;
  /** The adapters plugins may build: a filled registry, or definitions registered here (default: none). */
  adapters?: AdapterRegistry | readonly AnyAdapterDefinition[];
  /** The operator's local path rule; registered only when given (adapters then check no local paths). */
  localPaths?: LocalPathPolicy;
}

/** What the composition knows that the runtime config defaults to. */
export interface CompositionFacts {
  dataDir?: string;
  databaseUrl?: string;
  port?: number;
}

/** The tokens {@link registerCoreServices} always registers; plugins must not provide them. */
export const CORE_TOKENS: readonly InjectionToken<unknown>[] = [TOKENS.Logger, TOKENS.EventBus, TOKENS.RuntimeConfig, TOKENS.AdapterRegistry];

/** Registers the core services into `container` and answers the logger the composition writes to. */
export function registerCoreServices(container: DependencyContainer, core: CoreServices, facts: CompositionFacts): Logger {
  const logger = core.logger ?? pino({ level: 'silent' });
  container.register(TOKENS.Logger, { useValue: logger });
  container.register(TOKENS.EventBus, { useValue: new EventBus(logger) });
  container.register(TOKENS.RuntimeConfig, { useValue: runtimeConfigOf(core.runtime, facts) });
  container.register(TOKENS.AdapterRegistry, { useValue: adapterRegistryOf(core.adapters) });
  if (core.localPaths) container.register(TOKENS.LocalPathPolicy, { useValue: core.localPaths });
  return logger;
}

function runtimeConfigOf(runtime: Partial<RuntimeConfig> = {}, facts: CompositionFacts): RuntimeConfig {
  return {
    version: '0.0.0-dev',
    dataDir: facts.dataDir ?? '',
    databaseUrl: facts.databaseUrl,
    port: facts.port ?? 0,
    includeAdapters: [],
    excludeAdapters: [],
    // The caller's object is kept whole (the server's settings carry more than the kernel's fields).
    ...runtime,
  };
}

function adapterRegistryOf(adapters: CoreServices['adapters'] = []): AdapterRegistry {
  if (adapters instanceof AdapterRegistry) return adapters;
  const registry = new AdapterRegistry();
  for (const definition of adapters) {
    registry.register(definition, { packageName: `composed:${definition.kind}-${definition.id}`, version: '0.0.0' });
  }
  return registry;
}
