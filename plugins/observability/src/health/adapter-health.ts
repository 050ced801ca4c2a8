import type { OrmDatabase } from '@holdfast/orm-port';
import type { AdapterHealth, AdapterHealthState, AdapterHealthStatus } from '@holdfast/kernel';

/** Observability's table of the current health of each adapter configuration (created by `adapterHealthTable`). */
export const ADAPTER_HEALTH_TABLE = 'adapter_health';

const STATUSES: readonly string[] = ['ONLINE', 'DEGRADED', 'OFFLINE'];

interface HealthRow {
  adapter_config_id: string;
  last_health_check: Date | number | string | null;
  last_status: string;
  last_error: string | null;
  consecutive_failures: number | string;
}

/** A datetime column as libsql (epoch ms or text) or PostgreSQL (Date) returns it. */
function dateOf(value: Date | number | string): Date {
  if (value instanceof Date) return value;
  if (typeof value === 'number') return new Date(value);
  return /^\d+$/.test(value) ? new Date(Number(value)) : new Date(value);
}

function stateOf(row: HealthRow): AdapterHealthState {
  return {
    lastHealthCheck: row.last_health_check === null ? null : dateOf(row.last_health_check),
    lastStatus: (STATUSES.includes(row.last_status) ? row.last_status : 'ONLINE') as AdapterHealthStatus,
    lastError: row.last_error ?? null,
    consecutiveFailures: Number(row.consecutive_failures),
  };
}

/**
 * The health state of adapter configurations in observability's own `adapter_health` table: written by the
 * HEALTH_CHECK task and by the catalog's connection tests (through `TOKENS.AdapterHealth`), read by the catalog's
 * adapter answers and the `holdfast_adapter_health` metric. A configuration without a row was never checked.
 */
export class AdapterHealthStore implements AdapterHealth {
  constructor(private readonly database: () => OrmDatabase) {}

  private knex() {
    return this.database().em().getKnex();
  }

  async statesOf(configIds: readonly string[]): Promise<Map<string, AdapterHealthState>> {
    const ids = [...new Set(configIds)];
    const states = new Map<string, AdapterHealthState>();
    // Bounded batches: PostgreSQL and SQLite both cap the parameters of one statement.
    for (let start = 0; start < ids.length; start += 500) {
      const rows: HealthRow[] = await this.knex()(ADAPTER_HEALTH_TABLE)
        .select('adapter_config_id', 'last_health_check', 'last_status', 'last_error', 'consecutive_failures')
        .whereIn('adapter_config_id', ids.slice(start, start + 500));
      for (const row of rows) states.set(row.adapter_config_id, stateOf(row));
    }
    return states;
  }

  /** The state of one configuration (the unchecked state when it has none). */
  async stateOf(configId: string): Promise<AdapterHealthState | undefined> {
    return (await this.statesOf([configId])).get(configId);
  }

  /** Stores the state of one configuration, replacing the previous one. */
  async record(configId: string, state: AdapterHealthState): Promise<void> {
    const platform = this.database().em().getPlatform();
    await this.knex()(ADAPTER_HEALTH_TABLE)
      .insert({
        adapter_config_id: configId,
        last_health_check: state.lastHealthCheck === null ? null : platform.processDateProperty(state.lastHealthCheck),
        last_status: state.lastStatus,
        last_error: state.lastError === null ? null : state.lastError.slice(0, 2000),
        consecutive_failures: state.consecutiveFailures,
      })
      .onConflict('adapter_config_id')
      .merge();
  }

  async recordConnectionTest(configId: string, ok: boolean, message: string): Promise<void> {
    const failures = (await this.stateOf(configId))?.consecutiveFailures ?? 0;
    await this.record(configId, {
      lastHealthCheck: new Date(),
      lastStatus: ok ? 'ONLINE' : 'OFFLINE',
      lastError: ok ? null : message,
      consecutiveFailures: ok ? 0 : failures + 1,
    });
  }
}
