import type { Command } from 'commander';
import type { CliOutput } from '../output.js';
import { hasRemote } from '../remote/connection.js';
import { UsageError } from '../remote/exit-codes.js';
import { printJson } from '../remote/render.js';
import { resolveOwner, withIdentity } from './identity-context.js';
import { keyTable, remoteKeys } from './remote-keys.js';

/** Parses `--expires`: an ISO date, or a number of days such as `90d`. */
export function parseExpiry(text: string | undefined, now = new Date()): Date | null {
  if (!text) return null;
  const days = /^(\d+)d$/.exec(text);
  const when = days ? new Date(now.getTime() + Number(days[1]) * 86_400_000) : new Date(text);
  if (Number.isNaN(when.getTime())) throw new Error(`--expires must be an ISO date or a number of days like 90d, got "${text}"`);
  if (when.getTime() <= now.getTime()) throw new Error('--expires must be in the future');
  return when;
}

/**
 * Remote (through the API) when a server is configured (`--url`, HOLDFAST_URL or `holdfast login`) and `--local` is
 * not given; otherwise the local database of this installation, as before remote commands existed.
 */
async function useRemote(command: Command, options: { local?: boolean }): Promise<boolean> {
  return !options.local && (await hasRemote(command));
}

const LOCAL_HELP = 'edit the local database (HOLDFAST_DATA_DIR / DATABASE_URL) even when a server is configured';

/** `holdfast keys create|list|rotate|toggle|revoke`: API keys; the raw key is printed once. */
export function addKeysCommand(program: Command, output: CliOutput): void {
  const keys = program
    .command('keys')
    .description('manage API keys (on the configured server, or with --local in the local database)')
    .addHelpText('after', '\nExamples:\n  $ holdfast keys create --name "ci pipeline" --permissions jobs:execute,history:read --expires 90d\n  $ holdfast keys list --json\n');

  keys
    .command('create')
    .description('create an API key and print the raw key once')
    .requiredOption('--name <name>', 'what the key is for, e.g. "ci pipeline"')
    .requiredOption('--permissions <list>', 'comma-separated permissions, e.g. jobs:execute,history:read')
    .option('--expires <when>', 'ISO date or days from now (e.g. 90d); default: never')
    .option('--allow-backup-deletion', 'let the key delete backups and take the other protected actions (default: it cannot); on a server this needs a fresh second factor')
    .option('--user <email>', 'owning user, local only (default: the only super administrator)')
    .option('--local', LOCAL_HELP)
    .option('--json', 'print JSON')
    .action(async (options: { name: string; permissions: string; expires?: string; allowBackupDeletion?: boolean; user?: string; local?: boolean; json?: boolean }, command: Command) => {
      const permissions = options.permissions.split(',').map((p) => p.trim()).filter(Boolean);
      const expiresAt = parseExpiry(options.expires);
      const allowBackupDeletion = options.allowBackupDeletion === true;
      if (await useRemote(command, options)) return remoteKeys.create(command, output, { name: options.name, permissions, expiresAt, allowBackupDeletion, json: options.json });
      const issued = await withIdentity(async (identity) => {
        const owner = await resolveOwner(identity, options.user);
        // Local mode runs on the server's own database (shell access already holds every key): no step-up, but audited.
        const created = await identity.apiKeys.create(owner.id, { name: options.name, permissions, expiresAt, allowBackupDeletion });
        await identity.audit.record(
          { userId: owner.id },
          { action: 'api-key.create', resource: 'api-key', resourceId: created.apiKey.id, details: { name: options.name, permissions, allowBackupDeletion, via: 'cli' } },
        );
        return created;
      });
      if (options.json) return printJson(output, { key: issued.rawKey, apiKey: issued.apiKey });
      output.write(`Created API key ${issued.apiKey.id} (${issued.apiKey.prefix}...)\n`);
      output.write(`${issued.rawKey}\n`);
      output.write('This is the only time the key is shown: store it now.\n');
    });

  keys
    .command('list')
    .description('list API keys (never the raw key)')
    .option('--user <email>', 'only the keys of this user (local only)')
    .option('--local', LOCAL_HELP)
    .option('--json', 'print JSON')
    .action(async (options: { user?: string; json?: boolean; local?: boolean }, command: Command) => {
      if (await useRemote(command, options)) return remoteKeys.list(command, output, options.json);
      const listed = await withIdentity(async (identity) => {
        const owner = options.user ? await resolveOwner(identity, options.user) : undefined;
        return identity.apiKeys.list(owner?.id);
      });
      if (options.json) return output.write(`${JSON.stringify(listed, null, 2)}\n`);
      output.write(keyTable(listed));
    });

  keys
    .command('revoke')
    .description('delete an API key; it stops working at once')
    .argument('<id>', 'key id (see holdfast keys list)')
    .option('--local', LOCAL_HELP)
    .option('--json', 'print JSON')
    .action(async (id: string, options: { local?: boolean; json?: boolean }, command: Command) => {
      if (await useRemote(command, options)) return remoteKeys.revoke(command, output, id, options.json);
      const removed = await withIdentity(async (identity) => {
        const key = await identity.apiKeys.delete(id);
        await identity.audit.record({ userId: null }, { action: 'api-key.delete', resource: 'api-key', resourceId: id, details: { via: 'cli' } });
        return key;
      });
      output.write(`Revoked API key ${removed.id} (${removed.name})\n`);
    });

  keys
    .command('rotate')
    .description('replace a key by a new secret (same id, name and permissions) on the server; prints the new key once')
    .argument('<id>', 'key id (see holdfast keys list)')
    .option('--json', 'print JSON')
    .action(async (id: string, options: { json?: boolean }, command: Command) => remoteKeys.rotate(command, output, id, options.json));

  keys
    .command('toggle')
    .description('disable an enabled key or enable a disabled one on the server (or force with --enable/--disable)')
    .argument('<id>', 'key id (see holdfast keys list)')
    .option('--enable', 'enable the key')
    .option('--disable', 'disable the key')
    .option('--json', 'print JSON')
    .action(async (id: string, options: { enable?: boolean; disable?: boolean; json?: boolean }, command: Command) => {
      if (options.enable && options.disable) throw new UsageError('give --enable or --disable, not both');
      const wanted = options.enable ? true : options.disable ? false : undefined;
      return remoteKeys.toggle(command, output, id, wanted, options.json);
    });
}
