import type { Command } from 'commander';
import { EXIT } from '../remote/exit-codes.js';
import { remote, withJson } from '../remote/action.js';
import { printJson } from '../remote/render.js';
import { formatTable, type CliOutput } from '../output.js';

type AdapterType = 'database' | 'storage' | 'notification';
const TYPES: readonly string[] = ['database', 'storage', 'notification'];

/** `holdfast adapters list|test`: the adapter configurations (sources, destinations, channels) on the server. */
export function addRemoteAdapterCommands(adapters: Command, output: CliOutput): void {
  withJson(
    adapters
      .command('list')
      .description('list the configured sources, destinations and notification channels on the server')
      .option('--type <type>', 'database, storage or notification'),
    ['holdfast adapters list --type storage'],
  ).action(
    remote<{ json?: boolean; type?: string }>(output, async ({ client, options }) => {
      if (options.type && !TYPES.includes(options.type)) throw new Error(`--type must be one of ${TYPES.join(', ')}`);
      const query = options.type ? { type: options.type as AdapterType } : {};
      const listed = await client.unwrap(client.api.GET('/api/adapters', { params: { query } }));
      if (options.json) return printJson(output, listed);
      const rows = listed.map((entry) => [entry.id, entry.type, entry.adapterId, entry.name, entry.lastStatus ?? '-']);
      output.write(formatTable(['ID', 'TYPE', 'ADAPTER', 'NAME', 'STATUS'], rows));
    }),
  );

  withJson(
    adapters.command('test').description('test the connection of a configured adapter; exits 1 when it fails').argument('<id>', 'configuration id'),
    ['holdfast adapters test 7b0d...'],
  ).action(
    remote<{ json?: boolean }>(output, async ({ client, options }, id) => {
      const result = await client.unwrap(client.api.POST('/api/adapters/test-connection', { body: { id: id! } }));
      if (options.json) printJson(output, result);
      else output.write(`${result.success ? 'OK' : 'FAILED'}: ${result.message}${result.latencyMs !== undefined ? ` (${Math.round(result.latencyMs)} ms)` : ''}\n`);
      return result.success ? EXIT.success : EXIT.error;
    }),
  );
}
