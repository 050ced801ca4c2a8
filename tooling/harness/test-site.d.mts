/** The maintenance database of the local test PostgreSQL (trust auth, user root). */
export const TEST_POSTGRES_ADMIN_URL: string;

/** A throwaway PostgreSQL database for one test; `drop()` removes it. */
export interface ThrowawayDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** Creates `hf_test_<random>` on the local PostgreSQL and returns its URL. */
export function createThrowawayPostgres(): Promise<ThrowawayDatabase>;

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
export function createTestSite(dialect: TestDialect, label?: string): Promise<TestSite>;
