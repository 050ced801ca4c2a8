import { processRoleFrom, type ProcessRole } from './process-role.js';

/** Timing of the queue; production defaults, shortened by tests. */
export interface EngineOptions {
  /** `api` processes queue runs but never claim one (see {@link ProcessRole}). */
  role: ProcessRole;
  /** How often the queue is checked for triggers made by other processes (ms). */
  pollIntervalMs: number;
  /** How often this process refreshes the heartbeat of its runs and checks cancel requests and stuck runs (ms). */
  heartbeatMs: number;
  /** PostgreSQL: a Running row whose heartbeat is older than this belongs to a process that is gone (ms). */
  staleAfterMs: number;
  /** Shutdown waits this long for running executions before cancelling them (SPEC: 5 minutes). */
  shutdownGraceMs: number;
}

/** SPEC "Limits" shutdown grace and conservative timings. */
export const DEFAULT_ENGINE_OPTIONS: EngineOptions = {
  role: 'all',
  pollIntervalMs: 2_000,
  heartbeatMs: 5_000,
  staleAfterMs: 30_000,
  shutdownGraceMs: 5 * 60_000,
};

function positive(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (!raw) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a whole number of milliseconds (got "${raw}")`);
  return value;
}

/**
 * Options from `HOLDFAST_ROLE`, `HOLDFAST_ENGINE_POLL_MS`, `_HEARTBEAT_MS`, `_STALE_MS`, `_SHUTDOWN_GRACE_MS`, then
 * `overrides`.
 */
export function engineOptionsFrom(env: NodeJS.ProcessEnv, overrides: Partial<EngineOptions> = {}): EngineOptions {
  const fromEnv: Partial<EngineOptions> = {
    role: env.HOLDFAST_ROLE === undefined ? undefined : processRoleFrom(env),
    pollIntervalMs: positive(env, 'HOLDFAST_ENGINE_POLL_MS'),
    heartbeatMs: positive(env, 'HOLDFAST_ENGINE_HEARTBEAT_MS'),
    staleAfterMs: positive(env, 'HOLDFAST_ENGINE_STALE_MS'),
    shutdownGraceMs: positive(env, 'HOLDFAST_ENGINE_SHUTDOWN_GRACE_MS'),
  };
  const defined = Object.fromEntries(Object.entries({ ...fromEnv, ...overrides }).filter(([, v]) => v !== undefined));
  return { ...DEFAULT_ENGINE_OPTIONS, ...defined };
}
