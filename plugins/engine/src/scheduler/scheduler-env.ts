import type { ReportingOptions } from './scheduler-wiring.js';
import { schedulerClockFrom } from './scheduler-clock.js';

function milliseconds(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive whole number of milliseconds (got "${raw}")`);
  return value;
}

/**
 * Scheduler settings from the environment: `HOLDFAST_SCHEDULER_RELOAD_MS`, `HOLDFAST_SCHEDULER_LEADER_RETRY_MS`,
 * `HOLDFAST_SCHEDULER_CATCH_UP_MS`, and the compressed clock of benchmarks (`HOLDFAST_SCHEDULER_TIME_SCALE`,
 * `HOLDFAST_SCHEDULER_TIME_ORIGIN`). Unset values keep their defaults.
 */
export function schedulerOptionsFrom(env: NodeJS.ProcessEnv): Partial<ReportingOptions> {
  const options: Partial<ReportingOptions> = {
    reloadIntervalMs: milliseconds(env, 'HOLDFAST_SCHEDULER_RELOAD_MS'),
    leaderRetryMs: milliseconds(env, 'HOLDFAST_SCHEDULER_LEADER_RETRY_MS'),
    catchUpWindowMs: milliseconds(env, 'HOLDFAST_SCHEDULER_CATCH_UP_MS'),
    clock: schedulerClockFrom(env),
  };
  return Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
}
