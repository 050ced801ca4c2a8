/** Ports the observability plugin implements, registered under the matching TOKENS. */

/** Health status of a source, destination or channel (SPEC `AdapterConfig.lastStatus`). */
export type AdapterHealthStatus = 'ONLINE' | 'DEGRADED' | 'OFFLINE';

/** The current health of one adapter configuration: the SPEC fields of `AdapterConfig` the API answers with. */
export interface AdapterHealthState {
  lastHealthCheck: Date | null;
  lastStatus: AdapterHealthStatus;
  lastError: string | null;
  consecutiveFailures: number;
}

/** The state of a configuration never checked or tested. */
export const UNCHECKED_ADAPTER_HEALTH: Readonly<AdapterHealthState> = Object.freeze({ lastHealthCheck: null, lastStatus: 'ONLINE', lastError: null, consecutiveFailures: 0 });

/**
 * The health state of adapter configurations, kept by observability in its own `adapter_health` table (its
 * HEALTH_CHECK task writes it). The catalog shows it in its adapter answers and records connection tests through it.
 */
export interface AdapterHealth {
  /** The recorded state of each of the given configurations that has one; one never checked is left out. */
  statesOf(configIds: readonly string[]): Promise<Map<string, AdapterHealthState>>;
  /**
   * Records a connection test of a saved configuration: `ONLINE` and no error on success; otherwise `OFFLINE`, the
   * message (first 2000 characters) and one more consecutive failure.
   */
  recordConnectionTest(configId: string, ok: boolean, message: string): Promise<void>;
}

/** One system task's stored schedule as the configuration export carries it. */
export interface SystemTaskScheduleRecord {
  task: string;
  enabled: boolean;
  /** 5-part cron expression, in the system time zone. */
  schedule: string;
  /** ISO 8601, or null when the task never ran. */
  lastRunAt: string | null;
}

/**
 * The system task schedules, kept by observability in its own `system_task_schedules` table (it runs the tasks and
 * serves `/api/settings/system-tasks`). The catalog's configuration export and import carry them through this port.
 */
export interface SystemTaskSchedules {
  /** Every stored task schedule, ordered by task name. */
  list(): Promise<SystemTaskScheduleRecord[]>;
  /**
   * Sets `enabled` and `schedule` of the named tasks (next runs recomputed in the system time zone). A task this
   * installation does not know and a schedule that is not a valid cron expression are skipped; answers the names
   * applied. Not audited: the caller records the import that carries them.
   */
  restore(tasks: ReadonlyArray<Pick<SystemTaskScheduleRecord, 'task' | 'enabled' | 'schedule'>>): Promise<string[]>;
}
