import type { Command } from 'commander';
import { formatTable, type CliOutput } from '../output.js';

/** `holdfast adapters`: every adapter the server would load, including HOLDFAST_PLUGIN_DIR packages. */
export function addAdaptersCommand(program: Command, output: CliOutput): Command {
  return program
    .command('adapters')
    .description('without a subcommand: list the adapters installed here (kind, id, package, version); honours HOLDFAST_PLUGIN_DIR')
    .option('--json', 'print JSON instead of a table')
    .action(async (options: { json?: boolean }) => {
      const { discoverAdapters, loadRuntimeConfig, serverVersion } = await import('@holdfast/server');
      const settings = loadRuntimeConfig(process.env, serverVersion());
      const registry = await discoverAdapters({
        pluginDir: settings.pluginDir,
        include: settings.includeAdapters,
        exclude: settings.excludeAdapters,
      });
      const rows = registry.list().map(({ definition, origin }) => ({
        kind: definition.kind,
        id: definition.id,
        displayName: definition.displayName,
        package: origin.packageName,
        version: origin.version,
        directory: origin.directory,
      }));
      if (options.json) {
        output.write(`${JSON.stringify(rows, null, 2)}\n`);
        return;
      }
      output.write(formatTable(['KIND', 'ID', 'PACKAGE', 'VERSION'], rows.map((r) => [r.kind, r.id, r.package, r.version])));
    });
}
