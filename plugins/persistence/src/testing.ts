import { randomBytes } from 'node:crypto';
import { MikroORM } from '@mikro-orm/core';
import { PostgreSqlDriver } from '@mikro-orm/postgresql';

/** The maintenance database of the local test PostgreSQL (trust auth, user root). */
export const TEST_POSTGRES_ADMIN_URL = process.env.HOLDFAST_TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/postgres';

/** A throwaway PostgreSQL database for one test; `drop()` removes it. */
export interface ThrowawayDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

async function withAdmin<T>(work: (execute: (sql: string) => Promise<unknown>) => Promise<T>): Promise<T> {
  let orm: MikroORM;
  try {
    orm = await MikroORM.init({
      driver: PostgreSqlDriver,
      clientUrl: TEST_POSTGRES_ADMIN_URL,
      entities: [],
      discovery: { warnWhenNoEntities: false },
      ensureDatabase: false,
      pool: { min: 0, max: 1 },
    });
  } catch (error) {
    throw new Error(`Test PostgreSQL is not reachable at ${TEST_POSTGRES_ADMIN_URL}: ${(error as Error).message}`);
  }
  try {
    return await work((sql) => orm.em.getConnection().execute(sql));
  } finally {
    await orm.close(true);
  }
}

/** Creates `hf_test_<random>` on the local PostgreSQL and returns its URL. */
export async function createThrowawayPostgres(): Promise<ThrowawayDatabase> {
  const name = `hf_test_${randomBytes(6).toString('hex')}`;
  await withAdmin((execute) => execute(`CREATE DATABASE "${name}"`));
  const url = new URL(TEST_POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    // WITH (FORCE) ends sessions a failed test left open, so cleanup never hangs on them.
    drop: async () => {
      await withAdmin((execute) => execute(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
    },
  };
}

/** The two databases every suite runs on. */
export type TestDialect = 'sqlite' | 'postgresql';

/** Where one test's installation lives: a temp data directory and, on PostgreSQL, a throwaway database. */
export interface TestSite {
  dialect: TestDialect;
  dataDir: string;
  /** Set on PostgreSQL; unset selects the embedded libsql file in `dataDir`. */
  databaseUrl?: string;
  /** Drops the database and removes the directory. */
  remove(): Promise<void>;
}

/** Creates a {@link TestSite}; `label` names the temp directory so leftovers are recognisable. */
export async function createTestSite(dialect: TestDialect, label = 'site'): Promise<TestSite> {
  const { mkdtemp, rm } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const dataDir = await mkdtemp(join(tmpdir(), `holdfast-${label}-`));
  const postgres = dialect === 'postgresql' ? await createThrowawayPostgres() : undefined;
  return {
    dialect,
    dataDir,
    databaseUrl: postgres?.url,
    async remove() {
      await postgres?.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
