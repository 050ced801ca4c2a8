// Test support for plugin suites: boots a set of feature plugins the way the composition root does (register, open
// and migrate the database, start, mount routes, listen on an ephemeral port) and tears them down in reverse.
import { createHttpApp } from '@holdfast/http';
import { openDatabase } from '@holdfast/persistence';
import { silentLogger, TOKENS } from '@holdfast/kernel';
import pino from 'pino';

/** Starts `plugins` in `container` on the site's database; the container must already hold the ports they need. */
export async function startPluginApp({ site, container, plugins }) {
  for (const plugin of plugins) plugin.register?.(container);
  const db = await openDatabase({ dataDir: site.dataDir, databaseUrl: site.databaseUrl, plugins, logger: silentLogger });
  container.register(TOKENS.Database, { useValue: db });
  await db.migrate();
  for (const plugin of plugins) await plugin.start?.(container);
  const routes = plugins.flatMap((plugin) => plugin.routes?.(container) ?? []);
  const app = createHttpApp({ container, routes, logger: pino({ level: 'silent' }), trustProxy: false });
  const server = await new Promise((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    db,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(() => resolve()));
      for (const plugin of [...plugins].reverse()) await plugin.stop?.(container);
      await db.close();
      await site.remove();
    },
  };
}
