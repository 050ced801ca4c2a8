import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { HoldfastPlugin } from '@holdfast/kernel';
import type { Logger } from 'pino';
import type { DependencyContainer } from 'tsyringe';

/** Starts plugins in order; on a failure stops the ones already started (reverse order) and rethrows. */
export async function startPlugins(
  plugins: readonly HoldfastPlugin[],
  container: DependencyContainer,
  logger: Logger,
): Promise<HoldfastPlugin[]> {
  const started: HoldfastPlugin[] = [];
  try {
    for (const plugin of plugins) {
      await plugin.start?.(container);
      started.push(plugin);
      logger.debug({ plugin: plugin.name }, 'plugin started');
    }
  } catch (error) {
    await stopPlugins(started, container, logger);
    throw new Error(`Plugin ${plugins[started.length]?.name} failed to start: ${(error as Error).message}`, { cause: error });
  }
  return started;
}

/** Stops plugins in reverse order; one failing stop is logged and does not keep the others running. */
export async function stopPlugins(started: readonly HoldfastPlugin[], container: DependencyContainer, logger: Logger) {
  for (const plugin of [...started].reverse()) {
    if (!plugin.stop) continue;
    logger.info({ plugin: plugin.name }, 'stopping plugin');
    try {
      await plugin.stop(container);
    } catch (error) {
      logger.error({ err: error, plugin: plugin.name }, 'plugin failed to stop cleanly');
    }
  }
}

/** Listens on `port` (0: any free port) and resolves the port actually bound. */
export function listen(server: Server, port: number, host: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Stops accepting connections, ends idle keep-alive sockets, and resolves when in-flight requests finish. */
export function stopListening(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeIdleConnections();
  });
}
