import type { Command } from 'commander';
import type { CliOutput } from '../output.js';
import { withIdentity } from './identity-context.js';

/** `holdfast admin create --email --password`: the first super administrator, only while no user exists. */
export function addAdminCommand(program: Command, output: CliOutput): void {
  program
    .command('admin')
    .description('administrator bootstrap')
    .command('create')
    .description('create the first super administrator (only while no user exists)')
    .requiredOption('--email <email>', 'email address to sign in with')
    .requiredOption('--password <password>', 'password (at least 8 characters)')
    .option('--name <name>', 'display name (default: the part of the email before @)')
    .option('--json', 'print JSON instead of text')
    .action(async (options: { email: string; password: string; name?: string; json?: boolean }) => {
      const { createFirstAdmin } = await import('@holdfast/identity');
      const user = await withIdentity(async (identity) => {
        const created = await createFirstAdmin(identity.database, options, identity.events);
        await identity.audit.record(
          { userId: created.id },
          { action: 'CREATE', resource: 'user', resourceId: created.id, details: { bootstrap: 'cli', isSuperAdmin: true } },
        );
        return created;
      });
      if (options.json) output.write(`${JSON.stringify({ id: user.id, email: user.email, isSuperAdmin: true })}\n`);
      else output.write(`Created super administrator ${user.email} (${user.id})\n`);
    });
}
