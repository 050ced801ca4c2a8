import type { OrmDatabase } from './index.js';

/** One PostgreSQL session taken out of the pool (a `pg` client): what `LISTEN` and session-level locks need. */
export interface PgSession {
  query(sql: string, values?: unknown[]): Promise<{ rows: Array<Record<string, unknown>> }>;
  on(event: 'notification', listener: (message: { channel: string; payload?: string }) => void): unknown;
  on(event: 'error' | 'end', listener: () => void): unknown;
  removeAllListeners(event: string): unknown;
}

/** The pool behind the EntityManager, for work that must keep one session: hand every session back. */
export interface PgClient {
  acquireConnection(): Promise<PgSession>;
  releaseConnection(session: PgSession): Promise<void>;
}

/**
 * The connection pool of a PostgreSQL database, for session-bound features (advisory locks held across
 * transactions, `LISTEN`). knex types its client loosely, so the one cast lives here, behind a dialect check.
 */
export function pgClient(database: OrmDatabase): PgClient {
  if (database.dialect !== 'postgresql') throw new Error(`pgClient() needs PostgreSQL; this database is ${database.dialect}`);
  return database.em().getKnex().client as PgClient;
}
