// The engine tests' composition (the crash-drill child uses it too, hence plain JS): the core services apps/server
// registers, then the one boot sequence of @holdfast/boot. Not @holdfast/server itself: it depends on the engine.
import { composeHoldfast } from '@holdfast/boot';
import { AdapterRegistry, EventBus, TOKENS } from '@holdfast/kernel';
import { container as rootContainer } from 'tsyringe';

/** Starts plugins over a database in `dataDir` (or `databaseUrl`) and listens on a free loopback port. */
export async function composeServer({ dataDir, databaseUrl, plugins, logger, adapters = [] }) {
  const container = rootContainer.createChildContainer();
  const registry = new AdapterRegistry();
  for (const definition of adapters) registry.register(definition, { packageName: `test:${definition.kind}-${definition.id}`, version: '0.0.0' });
  container.register(TOKENS.RuntimeConfig, { useValue: { version: '0.1.0-test', dataDir, databaseUrl, port: 0, includeAdapters: [], excludeAdapters: [] } });
  container.register(TOKENS.Logger, { useValue: logger });
  container.register(TOKENS.EventBus, { useValue: new EventBus(logger) });
  container.register(TOKENS.AdapterRegistry, { useValue: registry });
  const stack = await composeHoldfast({ plugins, container, dataDir, databaseUrl, logger, http: { port: 0, host: '127.0.0.1', dropConnectionsOnClose: true } });
  return { url: stack.url, container, close: stack.close };
}
