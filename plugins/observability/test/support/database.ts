import { openDatabase, type HoldfastDatabase } from '@holdfast/database';
import { createTestSite, type TestDialect, type TestSite } from '@holdfast/tooling/harness/test-site';
import type { HoldfastPlugin } from '@holdfast/kernel';
import type { Knex } from '@mikro-orm/knex';
import { createObservabilityPlugin } from '../../src/index.js';

/**
 * A test site with the observability tables, plus the table of another plugin it still reads (the catalog's
 * `system_tasks`) created as that plugin's migration does. `open()` gives another
 * handle (its own pool) on the same database: a second process, as far as leases are concerned.
 */
export interface ObservabilityDatabase {
  site: TestSite;
  db: HoldfastDatabase;
  open(): Promise<HoldfastDatabase>;
  close(): Promise<void>;
}

const foreignTables: HoldfastPlugin = {
  name: 'foreign-tables',
  migrations: [
    {
      name: '20260101-test-000-foreign-tables',
      async up(builder) {
        const knex = builder as Knex;
        await knex.schema.createTable('system_tasks', (t) => {
          t.string('task', 64).primary();
          t.boolean('enabled').notNullable().defaultTo(true);
          t.string('schedule', 255).notNullable();
          t.datetime('last_run_at', { useTz: true }).nullable();
          t.datetime('next_run_at', { useTz: true }).nullable();
          t.datetime('updated_at', { useTz: true }).nullable();
        });
      },
    },
  ],
};

export async function observabilityDatabase(dialect: TestDialect): Promise<ObservabilityDatabase> {
  const site = await createTestSite(dialect, 'observability');
  const plugins = [foreignTables, createObservabilityPlugin()];
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
