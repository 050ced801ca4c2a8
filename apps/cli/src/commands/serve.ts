import type { Command } from 'commander';

/** `holdfast serve`: runs the server in this process until SIGTERM/SIGINT. */
export function addServeCommand(program: Command): void {
  program
    .command('serve')
    .description('start the Holdfast server (configured by PORT, HOLDFAST_DATA_DIR, DATABASE_URL, ...)')
    .action(async () => {
      const { runServerProcess } = await import('@holdfast/server');
      await runServerProcess(process.env);
    });
}
