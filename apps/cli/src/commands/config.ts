import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import type { CliOutput } from '../output.js';
import { withCatalog } from './catalog-context.js';

const CLI_ACTOR = { userId: null, ipAddress: null, userAgent: 'holdfast-cli' };

/** `holdfast config export|import`: the same service as GET /api/config/export and POST /api/config/import. */
export function addConfigCommand(program: Command, output: CliOutput): void {
  const config = program.command('config').description('export or import the configuration catalog (jobs, adapters, profiles, templates, settings)');
  config
    .command('export')
    .description('write the catalog as JSON; secrets are included only when encrypted with an encryption profile')
    .option('--encryption-profile <id>', 'encrypt secrets with a key derived from this encryption profile')
    .option('--out <file>', 'write to a file (mode 0600) instead of standard output')
    .option('--json', 'with --out, print the summary as JSON (without --out the document itself is JSON)')
    .action(async (options: { encryptionProfile?: string; out?: string; json?: boolean }) => {
      const document = await withCatalog((catalog) => catalog.transfer.export(CLI_ACTOR, options.encryptionProfile));
      const text = `${JSON.stringify(document, null, 2)}\n`;
      if (options.out) {
        await writeFile(options.out, text, { mode: 0o600 });
        if (options.json) output.write(`${JSON.stringify({ file: options.out, secrets: document.secrets })}\n`);
        else output.write(`Exported the catalog to ${options.out} (secrets ${document.secrets})\n`);
      } else {
        output.write(text);
      }
    });
  config
    .command('import')
    .description('import an export file; refuses name conflicts unless --merge')
    .requiredOption('--file <file>', 'the export document')
    .option('--key-file <file>', 'profile key (hex/base64) or recovery-kit key file that opens an encrypted export')
    .option('--merge', 'keep existing records with the same names instead of failing')
    .option('--dry-run', 'report what would be imported without writing')
    .option('--json', 'accepted for symmetry: the report is always JSON')
    .action(async (options: { file: string; keyFile?: string; merge?: boolean; dryRun?: boolean }) => {
      const document = JSON.parse(await readFile(options.file, 'utf8')) as Record<string, unknown>;
      const key = options.keyFile ? await readFile(options.keyFile, 'utf8') : undefined;
      const result = await withCatalog((catalog) =>
        catalog.transfer.import({ document, key, mode: options.merge ? 'merge' : 'strict', dryRun: Boolean(options.dryRun) }, CLI_ACTOR),
      );
      output.write(`${JSON.stringify(result, null, 2)}\n`);
    });
}
