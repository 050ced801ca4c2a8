import type { Command } from 'commander';
import type { CliOutput } from '../output.js';

/** `holdfast migrate`: applies pending migrations and lists what it applied. */
export function addMigrateCommand(program: Command, output: CliOutput): void {
  program
    .command('migrate')
    .description('apply pending database migrations and print the ones applied')
    .option('--json', 'print JSON instead of text')
    .action(async (options: { json?: boolean }) => {
      const { migrateDatabase } = await import('@holdfast/server');
      const report = await migrateDatabase({ env: process.env });
      if (options.json) {
        output.write(`${JSON.stringify({ location: report.location, applied: report.applied })}\n`);
        return;
      }
      if (report.applied.length === 0) {
        output.write(`No pending migrations: ${report.location} is up to date\n`);
        return;
      }
      output.write(`Applied ${report.applied.length} migration(s) to ${report.location}:\n`);
      for (const name of report.applied) output.write(`  ${name}\n`);
    });
}
