import type { Command } from 'commander';
import { EXIT } from '../remote/exit-codes.js';
import type { CliOutput } from '../output.js';

interface NewAdapterOptions {
  name?: string;
  packageName?: string;
  registry?: boolean;
}

/**
 * `holdfast adapters new <kind> <id> [dir]`: the scaffolder (@holdfast/create-adapter) run from this installation,
 * so the new package's devDependencies are `file:` links to the installation's sdk, testkit, vitest and typescript
 * and `npm install --offline` needs nothing published. docs/adapters/authoring.md walks through the rest.
 */
export function addAdaptersNewCommand(adapters: Command, output: CliOutput): void {
  adapters
    .command('new')
    .description('write a new adapter package (outside this installation) that builds and passes its conformance test')
    .argument('<kind>', 'source, storage, notification, retention or naming')
    .argument('<id>', 'kebab-case adapter id, e.g. my-nas')
    .argument('[dir]', 'target directory (default: ./holdfast-<kind>-<id>); must not exist or be empty')
    .option('--name <text>', 'display name (default: the id in title case)')
    .option('--package-name <name>', 'npm package name (default: holdfast-<kind>-<id>)')
    .option('--registry', 'take @holdfast/sdk, the testkit and the tools from the npm registry instead of this installation')
    .addHelpText('after', '\nExample:\n  $ holdfast adapters new storage my-nas ~/holdfast-plugins/holdfast-storage-my-nas\n')
    .action(async (kind: string, id: string, dir: string | undefined, options: NewAdapterOptions) => {
      const { runCli } = await import('@holdfast/create-adapter');
      const argv = [
        ...(dir ? [dir] : []),
        '--kind', kind,
        '--id', id,
        ...(options.name !== undefined ? ['--name', options.name] : []),
        ...(options.packageName !== undefined ? ['--package-name', options.packageName] : []),
        ...(options.registry ? ['--registry'] : []),
      ];
      const code = await runCli(argv, {
        out: (text) => output.write(`${text}\n`),
        err: (text) => void process.stderr.write(`${text.replaceAll('create-adapter', 'holdfast adapters new')}\n`),
      });
      // The scaffolder answers 2 for usage errors (bad kind or id): the CLI's usage code is 10.
      if (code !== 0) process.exitCode = code === 2 ? EXIT.usage : EXIT.error;
    });
}
