import { createHash } from 'node:crypto';
import { pgClient, type OrmDatabase, type PgSession } from '@holdfast/orm-port';

/**
 * First key of the two-int advisory locks that say which process streams a job's change log ("HfLg"). The scheduler's
 * lock uses the one-int form (SCHEDULER_LOCK_KEY), a separate key space in PostgreSQL, so the two never collide.
 */
export const CHANGE_LOG_LOCK_CLASS = 0x48664c67;

/** Second key: 31 bits of the job id's SHA-256 (kept positive, as `pg_locks.objid` shows it unsigned). */
export function changeLogLockKey(jobId: string): number {
  return createHash('sha256').update(jobId).digest().readUInt32BE(0) & 0x7fffffff;
}

/** Per-job leases: at most one process streams each job. */
export interface JobLeases {
  /** Takes the job's lease when free; true while this process holds it. */
  tryAcquire(jobId: string): Promise<boolean>;
  /** The jobs whose lease this process still holds (a lost connection loses them all). */
  held(): Promise<Set<string>>;
  release(jobId: string): Promise<void>;
  releaseAll(): Promise<void>;
  /** Called once when every lease was lost at once (the session died), so archivers stop without waiting for a check. */
  onLost(listener: (reason: string) => void): void;
}

/** libsql is one process: it holds every lease. */
export class SingleProcessLeases implements JobLeases {
  private readonly jobs = new Set<string>();

  async tryAcquire(jobId: string): Promise<boolean> {
    this.jobs.add(jobId);
    return true;
  }

  async held(): Promise<Set<string>> {
    return new Set(this.jobs);
  }

  async release(jobId: string): Promise<void> {
    this.jobs.delete(jobId);
  }

  async releaseAll(): Promise<void> {
    this.jobs.clear();
  }

  onLost(): void {}
}

/**
 * Session advisory locks `pg_try_advisory_lock(CHANGE_LOG_LOCK_CLASS, key(job))`, all held on one dedicated pool
 * connection. When this process dies its session closes and PostgreSQL frees every lock, so another process takes the
 * jobs over on its next attempt; when the session fails here, every lease is gone at once and the listeners hear it.
 */
export class PostgresJobLeases implements JobLeases {
  private session: PgSession | undefined;
  private readonly jobs = new Set<string>();
  private readonly listeners: Array<(reason: string) => void> = [];

  constructor(private readonly database: OrmDatabase) {}

  onLost(listener: (reason: string) => void): void {
    this.listeners.push(listener);
  }

  private async connection(): Promise<PgSession> {
    if (this.session) return this.session;
    const session = await pgClient(this.database).acquireConnection();
    const lose = (reason: string) => {
      if (this.session !== session) return;
      this.session = undefined;
      this.jobs.clear();
      session.removeAllListeners('error');
      session.removeAllListeners('end');
      void pgClient(this.database).releaseConnection(session).catch(() => undefined);
      for (const listener of this.listeners) listener(reason);
    };
    session.on('error', () => lose("the lease connection failed"));
    session.on('end', () => lose('the lease connection closed'));
    this.session = session;
    return session;
  }

  async tryAcquire(jobId: string): Promise<boolean> {
    if (this.jobs.has(jobId)) return true;
    const session = await this.connection();
    const result = await session.query('SELECT pg_try_advisory_lock($1::int, $2::int) AS ok', [CHANGE_LOG_LOCK_CLASS, changeLogLockKey(jobId)]);
    if (result.rows[0]?.ok !== true) return false;
    this.jobs.add(jobId);
    return true;
  }

  async held(): Promise<Set<string>> {
    const session = this.session;
    if (!session || this.jobs.size === 0) return new Set();
    try {
      const result = await session.query(
        "SELECT objid::bigint AS key FROM pg_locks WHERE locktype = 'advisory' AND classid = $1::bigint::oid AND objsubid = 2 AND pid = pg_backend_pid() AND granted",
        [CHANGE_LOG_LOCK_CLASS],
      );
      const keys = new Set(result.rows.map((row) => Number(row.key)));
      for (const jobId of [...this.jobs]) if (!keys.has(changeLogLockKey(jobId))) this.jobs.delete(jobId);
    } catch {
      // The session is gone, and its locks with it.
      this.jobs.clear();
    }
    return new Set(this.jobs);
  }

  async release(jobId: string): Promise<void> {
    if (!this.jobs.delete(jobId)) return;
    await this.session?.query('SELECT pg_advisory_unlock($1::int, $2::int)', [CHANGE_LOG_LOCK_CLASS, changeLogLockKey(jobId)]).catch(() => undefined);
  }

  async releaseAll(): Promise<void> {
    const session = this.session;
    this.session = undefined;
    this.jobs.clear();
    if (!session) return;
    session.removeAllListeners('error');
    session.removeAllListeners('end');
    await session.query('SELECT pg_advisory_unlock_all()').catch(() => undefined);
    await pgClient(this.database).releaseConnection(session).catch(() => undefined);
  }
}
