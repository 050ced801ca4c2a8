// Test support for plugin suites: boots a set of feature plugins with the one composition of @holdfast/boot
// (declared tokens checked, register, open and migrate the database, start, mount routes, listen on an ephemeral
// port) and tears them down in reverse.
import { composeHoldfast } from '@holdfast/boot';

/**
 * Starts `plugins` in `container` on the site's database. `core` are the boot's core services (logger, runtime,
 * adapters; silent and empty by default); the container must already hold the other ports the plugins need.
 */
export async function startPluginApp({ site, container, plugins, core = {} }) {
  const stack = await composeHoldfast({
    plugins,
    container,
    dataDir: site.dataDir,
    databaseUrl: site.databaseUrl,
    core,
    http: { port: 0, host: '127.0.0.1', dropConnectionsOnClose: true },
  });
  return {
    url: stack.url,
    db: stack.database,
    async close() {
      await stack.close();
      await site.remove();
    },
  };
}
