import { parseCommandLine, USAGE } from './options.js';
import { scaffoldAdapter, ScaffoldError } from './scaffold.js';
import { findInstallation, missingBuildOutputs } from './installation.js';
import { KIND_PROFILES } from './kinds.js';
import { relative } from 'node:path';

/** Where the CLI writes; injectable so tests can capture output. */
export interface CliOutput {
  out(text: string): void;
  err(text: string): void;
}

const processOutput: CliOutput = {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
};

/** Runs the scaffolder for `argv` (without node and script) and resolves the process exit code. */
export async function runCli(argv: readonly string[], output: CliOutput = processOutput, cwd = process.cwd()): Promise<number> {
  const parsed = parseCommandLine(argv);
  if (parsed.type === 'help') {
    output.out(USAGE);
    return 0;
  }
  if (parsed.type === 'error') {
    output.err(`create-adapter: ${parsed.message}\nRun create-adapter --help for usage.`);
    return 2;
  }
  const { options } = parsed;
  try {
    const links = options.registry ? undefined : findInstallation();
    const result = await scaffoldAdapter(options, cwd, links);
    const shown = relative(cwd, result.directory) || '.';
    const missing = links ? missingBuildOutputs(links) : [];
    output.out(
      [
        `Created ${options.packageName} (${options.kind} adapter "${options.id}") in ${shown}:`,
        ...result.files.map((file) => `  ${file}`),
        '',
        links
          ? `Its devDependencies are file: links to this Holdfast installation's copies (@holdfast/sdk: ${links['@holdfast/sdk']}); no registry needed.`
          : 'Its devDependencies come from the npm registry (--registry, or not run from a Holdfast installation).',
        ...(missing.length > 0
          ? [`Build the sdk and testkit with types first (npx turbo run build --filter=@holdfast/testkit...): missing ${missing.join(', ')}`]
          : []),
        '',
        'Next steps:',
        `  cd ${shown}`,
        links ? '  npm install --offline' : '  npm install',
        '  npm test            # the definition conformance test passes as generated',
        `  then write the methods and add ${KIND_PROFILES[options.kind].fullSuite} from @holdfast/testkit (see README.md)`,
      ].join('\n'),
    );
    return 0;
  } catch (error) {
    const message = error instanceof ScaffoldError || error instanceof Error ? error.message : String(error);
    output.err(`create-adapter: ${message}`);
    return 1;
  }
}
