import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Options of one fake adapter package written to disk. */
export interface FixturePackage {
  name: string;
  version?: string;
  /** The package.json `holdfast` block; omit for an ordinary library. */
  holdfast?: unknown;
  /** Fields of the default-exported definition object, overriding a valid one. */
  definition?: Record<string, unknown>;
  /** Full module source, replacing the generated definition. */
  source?: string;
  /** package.json `exports`; default `./index.js`. */
  exports?: unknown;
  entryFile?: string;
}

/**
 * A community-style adapter: a plain object carrying the brand, importing nothing of Holdfast. That is exactly
 * what discovery must accept, since identity is by brand.
 */
function definitionSource(fields: Record<string, unknown>): string {
  const { kind, id, ...rest } = fields;
  return `class FixtureImplementation {}
export default {
  brand: 'holdfast.adapter',
  apiVersion: 1,
  kind: ${JSON.stringify(kind)},
  id: ${JSON.stringify(id)},
  displayName: 'Fixture adapter',
  configSchema: { safeParse: (value) => ({ success: true, data: value }) },
  capabilities: {},
  implementation: FixtureImplementation,
  ...${JSON.stringify(rest)},
};
`;
}

/** Writes a package directory (package.json + entry module). */
export async function writePackage(directory: string, fixture: FixturePackage): Promise<string> {
  const entryFile = fixture.entryFile ?? 'index.js';
  await mkdir(join(directory, entryFile, '..'), { recursive: true });
  const manifest: Record<string, unknown> = {
    name: fixture.name,
    version: fixture.version ?? '1.2.3',
    type: 'module',
    exports: fixture.exports ?? `./${entryFile}`,
  };
  if (fixture.holdfast !== undefined) manifest.holdfast = fixture.holdfast;
  await writeFile(join(directory, 'package.json'), JSON.stringify(manifest, null, 2));
  const block = (fixture.holdfast ?? {}) as Record<string, unknown>;
  const source = fixture.source ?? definitionSource({ kind: block.kind, id: block.id, ...fixture.definition });
  await writeFile(join(directory, entryFile), source);
  return directory;
}

/** A temp tree with an app package.json (its dependencies installed under node_modules) and a plugin dir. */
export interface FixtureTree {
  root: string;
  manifestPath: string;
  pluginDir: string;
  /** Installs a package under the app's node_modules and lists it as a dependency. */
  addDependency(fixture: FixturePackage): Promise<string>;
  /** Places a package in the plugin dir under `folder` (default: the package name). */
  addCommunity(fixture: FixturePackage, folder?: string): Promise<string>;
  remove(): Promise<void>;
}

export async function createFixtureTree(): Promise<FixtureTree> {
  const root = await mkdtemp(join(tmpdir(), 'holdfast-discovery-'));
  const appDir = join(root, 'app');
  const pluginDir = join(root, 'plugins');
  await mkdir(join(appDir, 'node_modules'), { recursive: true });
  await mkdir(pluginDir);
  const dependencies: Record<string, string> = {};
  const manifestPath = join(appDir, 'package.json');
  const writeApp = () => writeFile(manifestPath, JSON.stringify({ name: 'fixture-app', dependencies }));
  await writeApp();
  return {
    root,
    manifestPath,
    pluginDir,
    async addDependency(fixture) {
      dependencies[fixture.name] = fixture.version ?? '1.2.3';
      await writeApp();
      return writePackage(join(appDir, 'node_modules', fixture.name), fixture);
    },
    addCommunity: (fixture, folder) => writePackage(join(pluginDir, folder ?? fixture.name), fixture),
    remove: () => rm(root, { recursive: true, force: true }),
  };
}
