import { readFileSync } from 'node:fs';
import { Command } from 'commander';
import { addAdaptersCommand } from './commands/adapters.js';
import { addAdminCommand } from './commands/admin.js';
import { addKeysCommand } from './commands/keys.js';
import { addConfigCommand } from './commands/config.js';
import { addMigrateCommand } from './commands/migrate.js';
import { addSecretsCommand } from './commands/secrets.js';
import { addServeCommand } from './commands/serve.js';
import type { CliOutput } from './output.js';

function cliVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version?: string };
  return manifest.version ?? '0.0.0';
}

/**
 * Builds the `holdfast` command line. Commands import the server lazily, so `--help`, `--version` and usage
 * errors answer without loading the ORM and the HTTP stack.
 */
export function createProgram(output: CliOutput = { write: (text) => void process.stdout.write(text) }): Command {
  const program = new Command('holdfast')
    .description('Holdfast: self-hosted backup manager')
    .version(cliVersion())
    .showHelpAfterError();
  addServeCommand(program);
  addMigrateCommand(program, output);
  addAdaptersCommand(program, output);
  addSecretsCommand(program, output);
  addConfigCommand(program, output);
  addAdminCommand(program, output);
  addKeysCommand(program, output);
  return program;
}
