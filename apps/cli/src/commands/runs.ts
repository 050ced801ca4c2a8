import type { Command } from 'commander';
import { exitCodeOfStatus } from '../remote/exit-codes.js';
import { remote, withJson } from '../remote/action.js';
import { followRun } from '../remote/follow.js';
import { printJson } from '../remote/render.js';
import type { CliOutput } from '../output.js';

/** `holdfast runs watch|logs|cancel`: one execution (a backup, restore or check run). */
export function addRunsCommand(program: Command, output: CliOutput): void {
  const runs = program.command('runs').description('follow, read and cancel executions');

  withJson(
    runs.command('watch').description('follow an execution until it ends; exits with its final status').argument('<executionId>'),
    ['holdfast runs watch 9c1e...'],
  ).action(
    remote<{ json?: boolean }>(output, async ({ client, options }, id) => {
      if (options.json) {
        // Machine-readable: one JSON event per line as the server sends them (NDJSON).
        let status: Parameters<typeof exitCodeOfStatus>[0] = 'Failed';
        for await (const event of client.watch(id!)) {
          output.write(`${JSON.stringify(event)}\n`);
          if (event.type === 'status') status = event.status;
        }
        return exitCodeOfStatus(status);
      }
      const final = await followRun(client, id!);
      output.write(`${final.id} ${final.status}\n`);
      return exitCodeOfStatus(final.status);
    }),
  );

  withJson(runs.command('logs').description("print an execution's log lines").argument('<executionId>'), ['holdfast runs logs 9c1e...']).action(
    remote<{ json?: boolean }>(output, async ({ client, options }, id) => {
      const answer = await client.unwrap(client.api.GET('/api/executions/{id}', { params: { path: { id: id! }, query: { includeLogs: 'true' } } }));
      const logs = answer.data.logs ?? [];
      if (options.json) return printJson(output, logs);
      for (const line of logs) output.write(`${line.time} ${line.level.toUpperCase().padEnd(5)} [${line.stage}] ${line.message}\n`);
    }),
  );

  withJson(runs.command('cancel').description('cancel a pending or running execution').argument('<executionId>'), ['holdfast runs cancel 9c1e...']).action(
    remote<{ json?: boolean }>(output, async ({ client, options }, id) => {
      const answer = await client.unwrap(client.api.POST('/api/executions/{id}/cancel', { params: { path: { id: id! } } }));
      if (options.json) return printJson(output, answer);
      output.write(`${answer.message}\n`);
    }),
  );
}
