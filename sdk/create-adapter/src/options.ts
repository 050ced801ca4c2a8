import { parseArgs } from 'node:util';
import { isScaffoldKind, SCAFFOLD_KINDS, type ScaffoldKind } from './kinds.js';

/** kebab-case, starting with a letter; the same rule the kernel applies to adapter ids. */
export const ID_PATTERN = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

// npm's rules for a package name, reduced to what matters here: lower case, url-safe, optional @scope/.
const PACKAGE_NAME_PATTERN = /^(?:@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/;

/** What the scaffolder needs to write a package. */
export interface ScaffoldOptions {
  kind: ScaffoldKind;
  id: string;
  displayName: string;
  packageName: string;
  /** Target directory, relative to the working directory or absolute. */
  directory: string;
  /** Take @holdfast/sdk, the testkit and the tools from the registry even when run from an installation. */
  registry?: boolean;
}

/** Outcome of reading the command line: options, a request for help, or a message naming the problem. */
export type ParsedCommandLine =
  | { type: 'scaffold'; options: ScaffoldOptions }
  | { type: 'help' }
  | { type: 'error'; message: string };

/** The `--help` text. */
export const USAGE = `Usage: create-adapter [dir] --kind <${SCAFFOLD_KINDS.join('|')}> --id <kebab-id> [options]

Writes a new Holdfast adapter package that builds and passes its conformance test.

Options:
  --kind <kind>          adapter kind: ${SCAFFOLD_KINDS.join(', ')} (required)
  --id <id>              kebab-case adapter id, e.g. "my-cloud" (required)
  --name <text>          display name (default: the id in title case)
  --package-name <name>  npm package name (default: holdfast-<kind>-<id>)
  --registry             take @holdfast/sdk, @holdfast/testkit, vitest and typescript from the npm registry
                         (default when run from a Holdfast installation: file: links to its own copies, so
                         npm install works offline and needs nothing published)
  -h, --help             show this text

[dir] defaults to ./<package name without scope>; it must not exist or be empty.`;

/** Title case of a kebab id: `my-cloud` -> `My Cloud`. */
export function titleFromId(id: string): string {
  return id
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join(' ');
}

/** Reads argv (without node and script) into scaffold options; never throws. */
export function parseCommandLine(argv: readonly string[]): ParsedCommandLine {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        kind: { type: 'string' },
        id: { type: 'string' },
        name: { type: 'string' },
        'package-name': { type: 'string' },
        registry: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    return { type: 'error', message: error instanceof Error ? error.message : String(error) };
  }
  const { values, positionals } = parsed;
  if (values.help) return { type: 'help' };
  if (positionals.length > 1) {
    return { type: 'error', message: `expected at most one directory, got ${positionals.length}: ${positionals.join(' ')}` };
  }
  const kind = values.kind;
  if (kind === undefined) return { type: 'error', message: `missing --kind (one of ${SCAFFOLD_KINDS.join(', ')})` };
  if (!isScaffoldKind(kind)) {
    return { type: 'error', message: `unknown --kind "${kind}": expected one of ${SCAFFOLD_KINDS.join(', ')}` };
  }
  const id = values.id;
  if (id === undefined) return { type: 'error', message: 'missing --id (a kebab-case id such as "my-cloud")' };
  if (!ID_PATTERN.test(id)) {
    return {
      type: 'error',
      message: `--id "${id}" is not kebab-case: use lower-case letters, digits and single hyphens, starting with a letter`,
    };
  }
  const displayName = (values.name ?? titleFromId(id)).trim();
  if (!displayName) return { type: 'error', message: '--name must not be empty' };
  if (/["\\\n\r`]/.test(displayName)) {
    return { type: 'error', message: '--name must not contain quotes, backslashes, backticks or line breaks' };
  }
  const packageName = values['package-name'] ?? `holdfast-${kind}-${id}`;
  if (packageName.length > 214 || !PACKAGE_NAME_PATTERN.test(packageName)) {
    return {
      type: 'error',
      message: `--package-name "${packageName}" is not a valid npm package name (lower case, url-safe, optional @scope/)`,
    };
  }
  const directory = positionals[0] ?? packageName.replace(/^@[^/]+\//, '');
  return { type: 'scaffold', options: { kind, id, displayName, packageName, directory, registry: values.registry ?? false } };
}
