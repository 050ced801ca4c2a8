import { EventBus, TOKENS, type AdapterRegistry, type HoldfastPlugin } from '@holdfast/kernel';
import type { Logger } from 'pino';
import type { DependencyContainer } from 'tsyringe';
import type { ServerSettings } from './runtime-config.js';

/** Registers the process-wide services every plugin may resolve, before any plugin registers its own. */
export function registerCoreServices(
  container: DependencyContainer,
  services: { settings: ServerSettings; logger: Logger; registry: AdapterRegistry; plugins: HoldfastPlugin[] },
): void {
  container.register(TOKENS.RuntimeConfig, { useValue: services.settings });
  container.register(TOKENS.Logger, { useValue: services.logger });
  container.register(TOKENS.EventBus, { useValue: new EventBus(services.logger) });
  container.register(TOKENS.AdapterRegistry, { useValue: services.registry });
  container.register(TOKENS.Plugins, { useValue: services.plugins });
}
