import { InvalidArgumentError, type Command } from 'commander';

const ROLES = ['all', 'api', 'worker'];

/**
 * `holdfast serve`: runs the server in this process until SIGTERM/SIGINT. `--role` (or `HOLDFAST_ROLE`) splits the
 * work of several processes on one PostgreSQL: `api` serves HTTP without running jobs, `worker` runs jobs, the
 * scheduler and system tasks, `all` (default) does both.
 */
export function addServeCommand(program: Command): void {
  program
    .command('serve')
    .description('start the Holdfast server (configured by PORT, HOLDFAST_DATA_DIR, DATABASE_URL, HOLDFAST_ROLE, ...)')
    .option('--role <role>', 'what this process does: all (default), api (HTTP only, no runs) or worker (runs, scheduler, system tasks)', (value: string) => {
      if (!ROLES.includes(value)) throw new InvalidArgumentError(`must be one of ${ROLES.join(', ')}`);
      return value;
    })
    .action(async (options: { role?: string }) => {
      const { runServerProcess } = await import('@holdfast/server');
      await runServerProcess(options.role ? { ...process.env, HOLDFAST_ROLE: options.role } : process.env);
    });
}
