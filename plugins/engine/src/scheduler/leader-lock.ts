
import { pgClient, type OrmDatabase, type PgClient, type PgSession } from '@holdfast/orm-port';

/** Key of the PostgreSQL advisory lock whose holder is the one scheduler ("HfSc"). */
export const SCHEDULER_LOCK_KEY = 0x48665363;

/** Decides which process runs the scheduler. */
export interface LeaderLock {
  /** Takes the lock when it is free; true while this process holds it. */
  tryAcquire(): Promise<boolean>;
  /** Checks the lock is still held (its connection may have died); false means leadership was lost. */
  isHeld(): Promise<boolean>;
  release(): Promise<void>;
  /** Why the last {@link isHeld} answered false after holding (for the log). */
  readonly lostBecause?: string;
}

/** libsql is one process: it is always the scheduler. */
export class SingleProcessLock implements LeaderLock {
  private isHolding = false;

  async tryAcquire(): Promise<boolean> {
    this.isHolding = true;
    return true;
  }

  async isHeld(): Promise<boolean> {
    return this.isHolding;
  }

  async release(): Promise<void> {
    this.isHolding = false;
  }
}

/**
 * `pg_try_advisory_lock` held on a dedicated pool connection for as long as this process is the scheduler. The
 * lock is per session, so when the holder dies its connection closes, PostgreSQL frees the lock, and the next
 * process that retries takes over.
 */
export class PostgresAdvisoryLock implements LeaderLock {
  private connection: PgSession | undefined;
  lostBecause: string | undefined;

  constructor(
    private readonly database: OrmDatabase,
    private readonly key = SCHEDULER_LOCK_KEY,
  ) {}

  private client(): PgClient {
    return pgClient(this.database);
  }

  async tryAcquire(): Promise<boolean> {
    if (this.connection) return this.isHeld();
    const client = this.client();
    const connection = await client.acquireConnection();
    try {
      const result = await connection.query('SELECT pg_try_advisory_lock($1) AS ok', [this.key]);
      if (result.rows[0]?.ok === true) {
        this.connection = connection;
        return true;
      }
    } catch {
      // An unusable connection is handed back below; the next retry takes a fresh one.
    }
    await client.releaseConnection(connection);
    return false;
  }

  async isHeld(): Promise<boolean> {
    const connection = this.connection;
    if (!connection) return false;
    try {
      const result = await connection.query(
        'SELECT count(*)::int AS n FROM pg_locks WHERE locktype = $1 AND objid = $2 AND pid = pg_backend_pid() AND granted',
        ['advisory', this.key],
      );
      if (result.rows[0]?.n === 1) return true;
      this.lostBecause = 'the lock is no longer held by this session';
    } catch (error) {
      // The session is gone, and the lock with it.
      this.lostBecause = `the lock's connection failed: ${error instanceof Error ? error.message : String(error)}`;
    }
    this.connection = undefined;
    await this.client().releaseConnection(connection).catch(() => undefined);
    return false;
  }

  async release(): Promise<void> {
    const connection = this.connection;
    if (!connection) return;
    this.connection = undefined;
    await connection.query('SELECT pg_advisory_unlock($1)', [this.key]).catch(() => undefined);
    await this.client().releaseConnection(connection).catch(() => undefined);
  }
}
