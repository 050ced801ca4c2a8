import type { Command } from 'commander';
import type { HoldfastClient } from '@holdfast/client';
import { connect } from '../remote/connection.js';
import { printJson } from '../remote/render.js';
import { formatTable, type CliOutput } from '../output.js';

interface KeyRow {
  id: string;
  name: string;
  prefix: string;
  enabled: boolean;
  expiresAt: string | Date | null;
  permissions: string[];
}

/** The table both the local and the remote `keys list` print. */
export function keyTable(keys: readonly KeyRow[]): string {
  const when = (value: string | Date | null) => (value === null ? 'never' : value instanceof Date ? value.toISOString() : value);
  const rows = keys.map((key) => [key.id, key.name, key.prefix, key.enabled ? 'enabled' : 'disabled', when(key.expiresAt), key.permissions.join(',')]);
  return formatTable(['ID', 'NAME', 'PREFIX', 'STATE', 'EXPIRES', 'PERMISSIONS'], rows);
}

function printIssued(output: CliOutput, verb: string, issued: { key: string; apiKey: { id: string; prefix: string } }, json?: boolean): void {
  if (json) return printJson(output, issued);
  output.write(`${verb} API key ${issued.apiKey.id} (${issued.apiKey.prefix}...)\n`);
  output.write(`${issued.key}\n`);
  output.write('This is the only time the key is shown: store it now.\n');
}

/** The `keys` subcommands through the API (used when a server is configured and `--local` is not given). */
export const remoteKeys = {
  async create(command: Command, output: CliOutput, input: { name: string; permissions: string[]; expiresAt: Date | null; allowBackupDeletion?: boolean; json?: boolean }) {
    const client = await connect(command);
    const body = { name: input.name, permissions: input.permissions, expiresAt: input.expiresAt ? input.expiresAt.toISOString() : null, allowBackupDeletion: input.allowBackupDeletion ?? false };
    printIssued(output, 'Created', await client.unwrap(client.api.POST('/api/api-keys', { body })), input.json);
  },
  async list(command: Command, output: CliOutput, json?: boolean) {
    const client = await connect(command);
    const listed = await client.unwrap(client.api.GET('/api/api-keys'));
    if (json) return printJson(output, listed.apiKeys);
    output.write(keyTable(listed.apiKeys));
  },
  async rotate(command: Command, output: CliOutput, id: string, json?: boolean) {
    const client = await connect(command);
    printIssued(output, 'Rotated', await client.unwrap(client.api.POST('/api/api-keys/{id}/rotate', { params: { path: { id } } })), json);
  },
  async toggle(command: Command, output: CliOutput, id: string, wanted: boolean | undefined, json?: boolean) {
    const client = await connect(command);
    const enabled = wanted ?? !(await current(client, id)).enabled;
    const key = await client.unwrap(client.api.PATCH('/api/api-keys/{id}', { params: { path: { id } }, body: { enabled } }));
    if (json) return printJson(output, key);
    output.write(`API key ${key.id} (${key.name}) is now ${key.enabled ? 'enabled' : 'disabled'}\n`);
  },
  async revoke(command: Command, output: CliOutput, id: string, json?: boolean) {
    const client = await connect(command);
    const key = await current(client, id);
    await client.unwrap(client.api.DELETE('/api/api-keys/{id}', { params: { path: { id } } }));
    if (json) return printJson(output, { revoked: key.id, name: key.name });
    output.write(`Revoked API key ${key.id} (${key.name})\n`);
  },
};

async function current(client: HoldfastClient, id: string) {
  return client.unwrap(client.api.GET('/api/api-keys/{id}', { params: { path: { id } } }));
}
