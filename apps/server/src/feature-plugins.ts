import type { HoldfastPlugin } from '@holdfast/kernel';
import { createCatalogPlugin } from '@holdfast/catalog';
import { createEnginePlugin, processRoleFrom, runsJobs } from '@holdfast/engine';
import { createHttpPlugin } from '@holdfast/http';
import { createIdentityPlugin } from '@holdfast/identity';
import { createNotificationsPlugin } from '@holdfast/notifications';
import { createObservabilityPlugin } from '@holdfast/observability';
import { createPersistencePlugin } from '@holdfast/persistence';
import { createStorageBrowserPlugin } from '@holdfast/storage-browser';

/**
 * The feature plugins, in start order (stopped in reverse). Static on purpose: features are part of the product,
 * unlike adapters, which are discovered. Identity comes before the catalog: the catalog reads its settings table.
 */
export function featurePlugins(env: NodeJS.ProcessEnv = process.env): HoldfastPlugin[] {
  // HOLDFAST_ROLE=api: serve HTTP and queue runs, but leave runs, the scheduler and system tasks to the workers.
  const isWorker = runsJobs(processRoleFrom(env));
  // Plugins read their own variables (system key, admin bootstrap, engine timings, role) from the server's environment.
  return [
    createPersistencePlugin(),
    createHttpPlugin(),
    createIdentityPlugin({ env }),
    createCatalogPlugin({ env }),
    // Before the engine: a run reaped at the engine's start, or a first scheduler or statistics pass that fails, raises
    // its event while the engine starts, and the engine's last outcome events come while it stops.
    createNotificationsPlugin(),
    createEnginePlugin({ env }),
    createStorageBrowserPlugin(),
    createObservabilityPlugin({ runsScheduledTasks: isWorker, env }),
  ];
}
