import type { Command } from 'commander';
import { exitCodeOfStatus } from '../remote/exit-codes.js';
import { remote, withJson } from '../remote/action.js';
import { followRun } from '../remote/follow.js';
import { printJson } from '../remote/render.js';
import { formatTable, type CliOutput } from '../output.js';

/** `holdfast jobs list|show|run`: backup jobs on the server. */
export function addJobsCommand(program: Command, output: CliOutput): void {
  const jobs = program.command('jobs').description('list, show and run backup jobs on the server');

  withJson(jobs.command('list').description('list jobs (id, name, schedule, state)'), ['holdfast jobs list', 'holdfast jobs list --json']).action(
    remote<{ json?: boolean }>(output, async ({ client, options }) => {
      const listed = await client.unwrap(client.api.GET('/api/jobs'));
      if (options.json) return printJson(output, listed);
      const rows = listed.map((job) => [job.id, job.name, job.effectiveSchedule, job.enabled ? 'enabled' : 'disabled']);
      output.write(formatTable(['ID', 'NAME', 'SCHEDULE', 'STATE'], rows));
    }),
  );

  withJson(jobs.command('show').description('show one job').argument('<id>', 'job id (see holdfast jobs list)'), ['holdfast jobs show 3f2a...']).action(
    remote<{ json?: boolean }>(output, async ({ client, options }, id) => {
      const job = await client.unwrap(client.api.GET('/api/jobs/{id}', { params: { path: { id: id! } } }));
      if (options.json) return printJson(output, job);
      const record = job as unknown as Record<string, unknown>;
      for (const key of ['id', 'name', 'enabled', 'effectiveSchedule', 'sourceId', 'compression', 'databases', 'encryptionProfileId']) {
        if (key in record) output.write(`${key.padEnd(20)} ${JSON.stringify(record[key])}\n`);
      }
      const destinations = (record.destinations as Array<{ configId: string; priority: number }> | undefined) ?? [];
      for (const destination of destinations) output.write(`${'destination'.padEnd(20)} ${destination.configId} (priority ${destination.priority})\n`);
    }),
  );

  withJson(
    jobs
      .command('run')
      .description('run a job now; with --wait, follow it and exit with its final status (0 Success, 2 Partial, 3 Failed, 4 Cancelled)')
      .argument('<id>', 'job id (see holdfast jobs list)')
      .option('--wait', 'follow the run with a progress line until it ends')
      .option('--lock', 'write the backup locked (excluded from retention)'),
    ['holdfast jobs run 3f2a... --wait', 'HOLDFAST_URL=https://backups.example.com HOLDFAST_API_KEY=svc_key_... holdfast jobs run 3f2a... --wait --json'],
  ).action(
    remote<{ json?: boolean; wait?: boolean; lock?: boolean }>(output, async ({ client, options }, id) => {
      const queued = await client.unwrap(
        client.api.POST('/api/jobs/{id}/run', { params: { path: { id: id! } }, body: options.lock ? { lock: true } : {} }),
      );
      if (!options.wait) {
        if (options.json) return printJson(output, queued);
        output.write(`${queued.executionId}\n`);
        return;
      }
      const final = await followRun(client, queued.executionId, { json: options.json });
      if (options.json) printJson(output, final);
      else output.write(`${final.id} ${final.status}\n`);
      return exitCodeOfStatus(final.status);
    }),
  );
}
