// Test databases opened through the real database library (@holdfast/database): a libsql file in a temp dir, or a throwaway
// PostgreSQL database. The identity migrations run through its migrator exactly as in production.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SqlEntityManager } from '@mikro-orm/knex';
import type { HoldfastPlugin } from '@holdfast/kernel';
import { openDatabase as openHoldfastDatabase, type HoldfastDatabase } from '@holdfast/database';
import { createThrowawayPostgres } from '@holdfast/tooling/harness/test-site';
import { identityEntities } from '../../src/entities/index.js';
import { identityMigrations } from '../../src/migrations/index.js';

export type Dialect = 'sqlite' | 'postgresql';

/** Both dialects, for `describe.each`. */
export const DIALECTS: Dialect[] = ['sqlite', 'postgresql'];

/** A migrated database for one test, with a disposer that removes it. */
export interface TestDatabase {
  dialect: Dialect;
  database: HoldfastDatabase;
  /** Every row of every table as text, for scans such as "the raw key is nowhere". */
  dumpAllRows(): Promise<string>;
  close(): Promise<void>;
}

const schemaOnlyPlugin: HoldfastPlugin = { name: 'identity', entities: identityEntities, migrations: identityMigrations };

async function dumpRows(database: HoldfastDatabase): Promise<string> {
  const knex = (database.em() as SqlEntityManager).getKnex();
  const tables =
    database.dialect === 'sqlite'
      ? ((await knex.raw("select name from sqlite_master where type = 'table'")) as { name: string }[]).map((r) => r.name)
      : ((await knex.raw("select tablename as name from pg_tables where schemaname = 'public'")) as { rows: { name: string }[] }).rows.map(
          (r) => r.name,
        );
  const parts: string[] = [];
  for (const table of tables) parts.push(`${table}: ${JSON.stringify(await knex(table).select('*'))}`);
  return parts.join('\n');
}

/** Opens and migrates a fresh database of `dialect` with `plugins` (default: the identity schema only). */
export async function openDatabase(dialect: Dialect, plugins: readonly HoldfastPlugin[] = [schemaOnlyPlugin]): Promise<TestDatabase> {
  const dataDir = await mkdtemp(join(tmpdir(), 'holdfast-identity-'));
  const throwaway = dialect === 'postgresql' ? await createThrowawayPostgres() : undefined;
  const database = await openHoldfastDatabase({ dataDir, databaseUrl: throwaway?.url, plugins });
  await database.migrate();
  return {
    dialect,
    database,
    dumpAllRows: () => dumpRows(database),
    close: async () => {
      await database.close();
      await throwaway?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export const openLibsql = (): Promise<TestDatabase> => openDatabase('sqlite');
export const openPostgres = (): Promise<TestDatabase> => openDatabase('postgresql');
