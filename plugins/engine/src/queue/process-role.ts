/**
 * What one server process does when several share a PostgreSQL database (`HOLDFAST_ROLE`, `holdfast serve --role`):
 * `all` (default) serves HTTP and runs jobs, the scheduler and system tasks; `api` serves HTTP and queues runs but
 * never claims one; `worker` runs jobs, the scheduler and system tasks (and still answers HTTP for health checks and
 * metrics).
 */
export const PROCESS_ROLES = ['all', 'api', 'worker'] as const;
/** One of {@link PROCESS_ROLES}. */
export type ProcessRole = (typeof PROCESS_ROLES)[number];

/** `HOLDFAST_ROLE` read and checked; an unknown value is an error naming the variable. */
export function processRoleFrom(env: NodeJS.ProcessEnv): ProcessRole {
  const raw = env.HOLDFAST_ROLE?.trim().toLowerCase() || 'all';
  if (!(PROCESS_ROLES as readonly string[]).includes(raw)) {
    throw new Error(`HOLDFAST_ROLE must be one of ${PROCESS_ROLES.join(', ')} (got "${env.HOLDFAST_ROLE}")`);
  }
  return raw as ProcessRole;
}

/** True when a process of `role` claims runs and runs the scheduler and system tasks. */
export function runsJobs(role: ProcessRole): boolean {
  return role !== 'api';
}
