import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { addAdaptersCommand } from './commands/adapters.js';
import { addAgentCommand } from './commands/agent.js';
import { addAdaptersNewCommand } from './commands/adapters-new.js';
import { addAdminCommand } from './commands/admin.js';
import { addBackupsCommand } from './commands/backups.js';
import { addCompletionCommand } from './commands/completion.js';
import { addHistoryCommand } from './commands/history.js';
import { addJobsCommand } from './commands/jobs.js';
import { addKeysCommand } from './commands/keys.js';
import { addConfigCommand } from './commands/config.js';
import { addLoginCommands } from './commands/login.js';
import { addMigrateCommand } from './commands/migrate.js';
import { addRemoteAdapterCommands } from './commands/remote-adapters.js';
import { addRunsCommand } from './commands/runs.js';
import { addSecretsCommand } from './commands/secrets.js';
import { addServeCommand } from './commands/serve.js';
import type { CliOutput } from './output.js';

function cliVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
  return manifest.version ?? '0.0.0';
}

const HELP_FOOTER = `
Remote commands (login, jobs, runs, history, backups, adapters list|test, keys) talk to a server:
  $ holdfast login https://backups.example.com --api-key svc_key_...
  $ holdfast jobs list
  $ holdfast jobs run <job id> --wait
or, without a stored login (CI): HOLDFAST_URL=... HOLDFAST_API_KEY=... holdfast jobs run <job id> --wait

Exit codes: 0 success, 1 other error, 2 run ended Partial, 3 run Failed, 4 run Cancelled,
  10 usage or configuration, 11 authentication or permission, 12 not found, 13 server unreachable.
`;

/**
 * Builds the `holdfast` command line. Local commands import the server lazily, so `--help`, `--version` and usage
 * errors answer without loading the ORM and the HTTP stack; remote commands only load the fetch-based client.
 */
export function createProgram(output: CliOutput = { write: (text) => void process.stdout.write(text) }): Command {
  const program = new Command('holdfast')
    .description('Holdfast: self-hosted backup manager')
    .version(cliVersion())
    .option('--url <url>', 'server URL for remote commands (default: HOLDFAST_URL, else the stored login)')
    .option('--api-key <key>', 'API key for remote commands (default: HOLDFAST_API_KEY, else the stored login)')
    .showHelpAfterError()
    .addHelpText('after', HELP_FOOTER);
  addServeCommand(program);
  addMigrateCommand(program, output);
  const adapters = addAdaptersCommand(program, output);
  addRemoteAdapterCommands(adapters, output);
  addAdaptersNewCommand(adapters, output);
  addSecretsCommand(program, output);
  addConfigCommand(program, output);
  addAdminCommand(program, output);
  addKeysCommand(program, output);
  addLoginCommands(program, output);
  addJobsCommand(program, output);
  addRunsCommand(program, output);
  addHistoryCommand(program, output);
  addBackupsCommand(program, output);
  addCompletionCommand(program, output);
  addAgentCommand(program, cliVersion());
  return program;
}
