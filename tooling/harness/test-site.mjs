// Throwaway databases and data directories for tests. Test-only: lives in the private tooling package so no
// shipped package carries it.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

/** The maintenance database of the local test PostgreSQL (trust auth, user root). */
export const TEST_POSTGRES_ADMIN_URL = process.env.HOLDFAST_TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/postgres';

async function asAdmin(sql) {
  const client = new pg.Client({ connectionString: TEST_POSTGRES_ADMIN_URL });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`Test PostgreSQL is not reachable at ${TEST_POSTGRES_ADMIN_URL}: ${error.message}`);
  }
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

/** Creates `hf_test_<random>` on the local PostgreSQL and returns its URL. */
export async function createThrowawayPostgres() {
  const name = `hf_test_${randomBytes(6).toString('hex')}`;
  await asAdmin(`CREATE DATABASE "${name}"`);
  const url = new URL(TEST_POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    // WITH (FORCE) ends sessions a failed test left open, so cleanup never hangs on them.
    drop: () => asAdmin(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

/** Creates a test site: a temp data directory and, on PostgreSQL, a throwaway database. */
export async function createTestSite(dialect, label = 'site') {
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
