import type { Command } from 'commander';
import { remote, withJson } from '../remote/action.js';
import { formatDuration, formatBytes, printJson } from '../remote/render.js';
import { formatTable, type CliOutput } from '../output.js';

interface HistoryOptions {
  json?: boolean;
  status?: string;
  type?: string;
  trigger?: string;
  job?: string;
  system?: boolean;
  search?: string;
  page?: string;
  pageSize?: string;
}

/** `holdfast history`: past and running executions, with the filters of `GET /api/history`. */
export function addHistoryCommand(program: Command, output: CliOutput): void {
  withJson(
    program
      .command('history')
      .description('list executions, newest first')
      .option('--status <list>', 'comma-separated: Pending,Running,Success,Partial,Failed,Cancelled')
      .option('--type <list>', 'comma-separated: Backup,Restore,IntegrityCheck,Verification')
      .option('--trigger <list>', 'comma-separated: Manual,Scheduler,Api')
      .option('--job <id>', 'only the executions of this job')
      .option('--system', 'only executions without a job (system tasks)')
      .option('--search <text>', 'text in the job name, backup path or trigger label')
      .option('--page <n>', '1-based page number')
      .option('--page-size <n>', 'rows per page (default 50, max 500)'),
    ['holdfast history --status Failed,Partial', 'holdfast history --job 3f2a... --page 1 --page-size 20 --json'],
  ).action(
    remote<HistoryOptions>(output, async ({ client, options }) => {
      const scope = options.job ? `job:${options.job}` : options.system ? 'system' : undefined;
      const query = {
        status: options.status,
        type: options.type,
        trigger: options.trigger,
        search: options.search,
        scope,
        page: options.page,
        pageSize: options.pageSize,
      };
      const answer = await client.unwrap(client.api.GET('/api/history', { params: { query } }));
      if (options.json) return printJson(output, answer);
      const rows = answer.executions.map((run) => [
        run.id,
        run.startedAt,
        run.type,
        run.status,
        run.jobName,
        formatDuration(run.duration),
        formatBytes((run as { size?: number | null }).size),
      ]);
      output.write(formatTable(['ID', 'STARTED', 'TYPE', 'STATUS', 'JOB', 'DURATION', 'SIZE'], rows));
    }),
  );
}
