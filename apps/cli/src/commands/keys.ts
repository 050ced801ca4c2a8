import type { Command } from 'commander';
import { formatTable, type CliOutput } from '../output.js';
import { resolveOwner, withIdentity } from './identity-context.js';

/** Parses `--expires`: an ISO date, or a number of days such as `90d`. */
export function parseExpiry(text: string | undefined, now = new Date()): Date | null {
  if (!text) return null;
  const days = /^(\d+)d$/.exec(text);
  const when = days ? new Date(now.getTime() + Number(days[1]) * 86_400_000) : new Date(text);
  if (Number.isNaN(when.getTime())) throw new Error(`--expires must be an ISO date or a number of days like 90d, got "${text}"`);
  if (when.getTime() <= now.getTime()) throw new Error('--expires must be in the future');
  return when;
}

/** `holdfast keys create|list|revoke`: API keys from the command line; the raw key is printed once. */
export function addKeysCommand(program: Command, output: CliOutput): void {
  const keys = program.command('keys').description('manage API keys');

  keys
    .command('create')
    .description('create an API key and print the raw key once')
    .requiredOption('--name <name>', 'what the key is for, e.g. "ci pipeline"')
    .requiredOption('--permissions <list>', 'comma-separated permissions, e.g. jobs:execute,history:read')
    .option('--expires <when>', 'ISO date or days from now (e.g. 90d); default: never')
    .option('--user <email>', 'owning user (default: the only super administrator)')
    .action(async (options: { name: string; permissions: string; expires?: string; user?: string }) => {
      const permissions = options.permissions.split(',').map((p) => p.trim()).filter(Boolean);
      const expiresAt = parseExpiry(options.expires);
      const issued = await withIdentity(async (identity) => {
        const owner = await resolveOwner(identity, options.user);
        const created = await identity.apiKeys.create(owner.id, { name: options.name, permissions, expiresAt });
        await identity.audit.record(
          { userId: owner.id },
          { action: 'api-key.create', resource: 'api-key', resourceId: created.apiKey.id, details: { name: options.name, permissions, via: 'cli' } },
        );
        return created;
      });
      output.write(`Created API key ${issued.apiKey.id} (${issued.apiKey.prefix}...)\n`);
      output.write(`${issued.rawKey}\n`);
      output.write('This is the only time the key is shown: store it now.\n');
    });

  keys
    .command('list')
    .description('list API keys (never the raw key)')
    .option('--user <email>', 'only the keys of this user')
    .option('--json', 'print JSON')
    .action(async (options: { user?: string; json?: boolean }) => {
      const listed = await withIdentity(async (identity) => {
        const owner = options.user ? await resolveOwner(identity, options.user) : undefined;
        return identity.apiKeys.list(owner?.id);
      });
      if (options.json) return output.write(`${JSON.stringify(listed, null, 2)}\n`);
      const rows = listed.map((key) => [
        key.id,
        key.name,
        key.prefix,
        key.enabled ? 'enabled' : 'disabled',
        key.expiresAt ? key.expiresAt.toISOString() : 'never',
        key.permissions.join(','),
      ]);
      output.write(formatTable(['ID', 'NAME', 'PREFIX', 'STATE', 'EXPIRES', 'PERMISSIONS'], rows));
    });

  keys
    .command('revoke')
    .description('delete an API key; it stops working at once')
    .argument('<id>', 'key id (see holdfast keys list)')
    .action(async (id: string) => {
      const removed = await withIdentity(async (identity) => {
        const key = await identity.apiKeys.delete(id);
        await identity.audit.record({ userId: null }, { action: 'api-key.delete', resource: 'api-key', resourceId: id, details: { via: 'cli' } });
        return key;
      });
      output.write(`Revoked API key ${removed.id} (${removed.name})\n`);
    });
}
