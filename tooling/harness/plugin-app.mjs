// Test support for plugin suites: boots a set of feature plugins with the one composition of @holdfast/boot
// (declared tokens checked, register, open and migrate the database, start, mount routes, listen on an ephemeral
// port) and tears them down in reverse.
import { composeHoldfast } from '@holdfast/boot';
import pino from 'pino';

/** Starts `plugins` in `container` on the site's database; the container must already hold the ports they need. */
export async function startPluginApp({ site, container, plugins }) {
  const stack = await composeHoldfast({
    plugins,
    container,
    dataDir: site.dataDir,
    databaseUrl: site.databaseUrl,
    logger: pino({ level: 'silent' }),
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
