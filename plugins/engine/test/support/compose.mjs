// The engine tests' composition (the crash-drill child uses it too, hence plain JS): the one boot sequence of
// @holdfast/boot with the test's adapters as its core services. Not @holdfast/server itself: it depends on the engine.
import { composeHoldfast } from '@holdfast/boot';
import { container as rootContainer } from 'tsyringe';

/** Starts plugins over a database in `dataDir` (or `databaseUrl`) and listens on a free loopback port. */
export async function composeServer({ dataDir, databaseUrl, plugins, logger, adapters = [] }) {
  const container = rootContainer.createChildContainer();
  const stack = await composeHoldfast({
    plugins,
    container,
    dataDir,
    databaseUrl,
    core: { logger, runtime: { version: '0.1.0-test' }, adapters },
    http: { port: 0, host: '127.0.0.1', dropConnectionsOnClose: true },
  });
  return { url: stack.url, container, close: stack.close };
}
