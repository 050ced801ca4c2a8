import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { InstallationLinks } from './installation.js';
import { KIND_PROFILES } from './kinds.js';
import type { ScaffoldOptions } from './options.js';
import { camelCase, outputPath, pascalCase, renderTemplate, type TemplateValues } from './render.js';
import { GENERATED_VERSIONS } from './versions.js';

/** Where the template files ship: `templates/common` for every kind, `templates/<kind>` on top. */
export const TEMPLATES_DIR = fileURLToPath(new URL('../templates', import.meta.url));

/** Thrown for problems the user can fix (target not empty); the CLI prints the message without a stack. */
export class ScaffoldError extends Error {
  override readonly name = 'ScaffoldError';
}

/** Result of a scaffold run. */
export interface ScaffoldResult {
  directory: string;
  /** Written files, relative to `directory`, with `/` separators, sorted. */
  files: string[];
}

// A value placed inside a JSON string in package.json.tmpl: a path may hold quotes or backslashes.
const jsonStringContent = (text: string) => JSON.stringify(text).slice(1, -1);

/**
 * The devDependencies specifiers: `file:` links to an installation's copies when `links` is given (works offline,
 * no registry), else the registry versions this scaffolder ships with.
 */
export function devDependencySpecs(links?: InstallationLinks): TemplateValues {
  const spec = (name: keyof InstallationLinks, registry: string) =>
    links ? jsonStringContent(`file:${links[name]}`) : registry;
  return {
    sdkDevSpec: spec('@holdfast/sdk', GENERATED_VERSIONS.sdkRange),
    testkitSpec: spec('@holdfast/testkit', GENERATED_VERSIONS.testkitRange),
    typesNodeSpec: spec('@types/node', GENERATED_VERSIONS.typesNode),
    reflectMetadataSpec: spec('reflect-metadata', GENERATED_VERSIONS.reflectMetadata),
    typescriptSpec: spec('typescript', GENERATED_VERSIONS.typescript),
    vitestSpec: spec('vitest', GENERATED_VERSIONS.vitest),
  };
}

/** The placeholder values the templates use. */
export function templateValues(options: ScaffoldOptions, links?: InstallationLinks): TemplateValues {
  const profile = KIND_PROFILES[options.kind];
  const pascal = pascalCase(options.id);
  return {
    kind: options.kind,
    id: options.id,
    displayName: options.displayName,
    packageName: options.packageName,
    className: `${pascal}${profile.classSuffix}`,
    configName: `${camelCase(options.id)}Config`,
    configType: `${pascal}Config`,
    defineFunction: profile.defineFunction,
    contractType: profile.contractType,
    fullSuite: profile.fullSuite,
    ...GENERATED_VERSIONS,
    ...devDependencySpecs(links),
  };
}

async function listTemplateFiles(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join('/'));
}

async function assertEmptyOrMissing(directory: string): Promise<void> {
  let info;
  try {
    info = await stat(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  if (!info.isDirectory()) throw new ScaffoldError(`${directory} exists and is not a directory`);
  const entries = await readdir(directory);
  if (entries.length > 0) {
    throw new ScaffoldError(`${directory} is not empty (${entries.length} entries); refusing to overwrite anything`);
  }
}

/**
 * Writes a new adapter package into `options.directory` (resolved against `cwd`). With `links` (see
 * `findInstallation`), its devDependencies are `file:` links to that Holdfast installation.
 */
export async function scaffoldAdapter(
  options: ScaffoldOptions,
  cwd = process.cwd(),
  links?: InstallationLinks,
): Promise<ScaffoldResult> {
  const directory = resolve(cwd, options.directory);
  await assertEmptyOrMissing(directory);
  const values = templateValues(options, links);
  // Kind files override common files of the same output path.
  const sources = new Map<string, string>();
  for (const layer of ['common', options.kind]) {
    const layerRoot = join(TEMPLATES_DIR, layer);
    for (const file of await listTemplateFiles(layerRoot)) sources.set(outputPath(file, values), join(layerRoot, file));
  }
  // Render everything before writing anything, so a template error leaves no half-written package.
  const rendered = new Map<string, string>();
  for (const [target, source] of sources) {
    rendered.set(target, renderTemplate(await readFile(source, 'utf8'), values, relative(TEMPLATES_DIR, source)));
  }
  for (const [target, text] of rendered) {
    const path = join(directory, target);
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, text, { flag: 'wx' });
  }
  return { directory, files: [...rendered.keys()].sort() };
}
