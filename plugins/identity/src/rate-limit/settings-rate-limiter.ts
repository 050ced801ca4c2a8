import type { OrmDatabase } from '@holdfast/orm-port';
import { silentLogger, type KernelLogger, type RateLimitClass, type RateLimitOutcome, type RateLimiter } from '@holdfast/kernel';
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { IdentitySettings } from '../settings/identity-settings.js';
import { currentLimit } from './limits.js';

/** Table of the shared PostgreSQL counters (created by the identity migration). */
export const RATE_LIMIT_TABLE = 'rate_limits';

/**
 * The one per-IP rate limiter. Limits come from the settings (re-read through the settings cache, so a change
 * applies without a restart). On libsql the counters live in memory (one process); on PostgreSQL they live in the
 * `rate_limits` table so every server process shares them. A counter store failure lets the request through and
 * is logged: the limiter must not take the API down with it.
 */
export class SettingsRateLimiter implements RateLimiter {
  private readonly limiters = new Map<RateLimitClass, RateLimiterAbstract>();

  constructor(
    private readonly database: OrmDatabase,
    private readonly settings: IdentitySettings,
    private readonly logger: KernelLogger = silentLogger,
  ) {}

  async consume(clientKey: string, kind: RateLimitClass): Promise<RateLimitOutcome> {
    const limit = await currentLimit(this.settings, kind);
    const limiter = this.limiterFor(kind);
    // Points are compared at consume time, so changing them applies to running windows; a new duration applies
    // from the next window.
    limiter.points = limit.points;
    limiter.duration = limit.durationSeconds;
    try {
      const result = await limiter.consume(clientKey, 1);
      return { allowed: true, limit: limit.points, remaining: result.remainingPoints, resetMs: result.msBeforeNext };
    } catch (rejection) {
      if (rejection instanceof RateLimiterRes) {
        return { allowed: false, limit: limit.points, remaining: 0, resetMs: rejection.msBeforeNext };
      }
      this.logger.error({ err: rejection, kind }, 'rate limiter store failed; request allowed');
      return { allowed: true, limit: limit.points, remaining: limit.points, resetMs: 0 };
    }
  }

  private limiterFor(kind: RateLimitClass): RateLimiterAbstract {
    let limiter = this.limiters.get(kind);
    if (!limiter) {
      limiter = this.database.dialect === 'postgresql' ? this.postgresLimiter(kind) : new RateLimiterMemory({ keyPrefix: kind, points: 1, duration: 60 });
      this.limiters.set(kind, limiter);
    }
    return limiter;
  }

  private postgresLimiter(kind: RateLimitClass): RateLimiterAbstract {
    const knex = this.database.em().getKnex();
    return new RateLimiterPostgres({
      storeClient: knex,
      storeType: 'knex',
      tableName: RATE_LIMIT_TABLE,
      tableCreated: true,
      clearExpiredByTimeout: false,
      keyPrefix: kind,
      points: 1,
      duration: 60,
    });
  }
}

/** Deletes expired PostgreSQL counters (the housekeeping task calls it); a no-op on libsql. */
export async function deleteExpiredCounters(database: OrmDatabase, now = Date.now()): Promise<number> {
  if (database.dialect !== 'postgresql') return 0;
  const knex = database.em().getKnex();
  return knex(RATE_LIMIT_TABLE).where('expire', '<', now).delete();
}
