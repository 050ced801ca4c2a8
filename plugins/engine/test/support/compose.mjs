// A minimal composition root for engine tests (the crash-drill child uses it too, hence plain JS): the same steps as
// apps/server's startServer (core services, plugin registration, database + migrations, routes, HTTP, plugin start),
// without depending on @holdfast/server, which itself depends on the engine (a package cycle).
import { createServer } from 'node:http';
import { AdapterRegistry, EventBus, TOKENS } from '@holdfast/kernel';
import { createHttpApp } from '@holdfast/http';
import { openDatabase } from '@holdfast/persistence';
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
  container.register(TOKENS.Plugins, { useValue: plugins });
  for (const plugin of plugins) plugin.register?.(container);
  const database = await openDatabase({ dataDir, databaseUrl, plugins, logger });
  container.register(TOKENS.Database, { useValue: database });
  await database.migrate();
  const routes = plugins.flatMap((plugin) => plugin.routes?.(container) ?? []);
  const app = createHttpApp({ container, routes, logger, trustProxy: false });
  const started = [];
  for (const plugin of plugins) {
    await plugin.start?.(container);
    started.push(plugin);
  }
  const server = createServer(app.callback());
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  let closing;
  return {
    url: `http://127.0.0.1:${port}`,
    container,
    close: () =>
      (closing ??= (async () => {
        server.closeAllConnections();
        await new Promise((resolve) => server.close(() => resolve()));
        for (const plugin of started.reverse()) await plugin.stop?.(container);
        await database.close();
      })()),
  };
}
