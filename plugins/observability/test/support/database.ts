import { openDatabase, type HoldfastDatabase } from '@holdfast/database';
import { createTestSite, type TestDialect, type TestSite } from '@holdfast/tooling/harness/test-site';
import { createObservabilityPlugin } from '../../src/index.js';

/**
 * A test site with the observability tables. `open()` gives another handle (its own pool) on the same database: a
 * second process, as far as leases are concerned.
 */
export interface ObservabilityDatabase {
  site: TestSite;
  db: HoldfastDatabase;
  open(): Promise<HoldfastDatabase>;
  close(): Promise<void>;
}

export async function observabilityDatabase(dialect: TestDialect): Promise<ObservabilityDatabase> {
  const site = await createTestSite(dialect, 'observability');
  const plugins = [createObservabilityPlugin()];
  const handles: HoldfastDatabase[] = [];
  const open = async () => {
    const handle = await openDatabase({ dataDir: site.dataDir, databaseUrl: site.databaseUrl, plugins });
    handles.push(handle);
    return handle;
  };
  const db = await open();
  await db.migrate();
  return {
    site,
    db,
    open,
    async close() {
      for (const handle of handles) await handle.close();
      await site.remove();
    },
  };
}
