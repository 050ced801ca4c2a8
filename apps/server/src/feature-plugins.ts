import type { HoldfastPlugin } from '@holdfast/kernel';
import { createAgentsPlugin } from '@holdfast/agents';
import { createCatalogPlugin } from '@holdfast/catalog';
import { createEnginePlugin, processRoleFrom, runsJobs } from '@holdfast/engine';
import { createHttpPlugin } from '@holdfast/http';
import { createIdentityPlugin } from '@holdfast/identity';
import { createNotificationsPlugin } from '@holdfast/notifications';
import { createObservabilityPlugin } from '@holdfast/observability';
import { createPersistencePlugin } from '@holdfast/persistence';
import { createStorageBrowserPlugin } from '@holdfast/storage-browser';

/**
 * The feature plugins. Static on purpose: features are part of the product, unlike adapters, which are discovered.
 * Their order is the boot's: providers before the plugins that require their tokens, and every plugin's `listen`
 * before any starts.
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
    // Before the engine, so it stops after it: the engine's last outcome events (runs cut short) are still sent.
    createNotificationsPlugin(),
    createEnginePlugin({ env }),
    createStorageBrowserPlugin(),
    createObservabilityPlugin({ runsScheduledTasks: isWorker, env }),
    // Remote agents (issue 48): identity, pairing and the agents' WebSocket on this listener.
    createAgentsPlugin({ env }),
  ];
}
