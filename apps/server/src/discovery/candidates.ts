import { existsSync } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { readManifest, toCandidate, type AdapterCandidate } from './package-manifest.js';

/** Finds a dependency's directory the way Node does: each `node_modules` from the manifest's directory upwards. */
function locateDependency(manifestPath: string, dependency: string): string | undefined {
  // resolve.paths gives Node's own lookup list; reading package.json directly sidesteps `exports` maps that do
  // not expose it.
  const lookupPaths = createRequire(manifestPath).resolve.paths(dependency) ?? [];
  return lookupPaths.map((base) => join(base, dependency)).find((dir) => existsSync(join(dir, 'package.json')));
}

/** Adapter candidates among the `dependencies` of the package.json at `manifestPath`, in declaration order. */
export async function dependencyCandidates(manifestPath: string): Promise<AdapterCandidate[]> {
  const root = await readManifest(dirname(manifestPath));
  const candidates: AdapterCandidate[] = [];
  for (const dependency of Object.keys(root.dependencies ?? {})) {
    const located = locateDependency(manifestPath, dependency);
    if (!located) {
      throw new Error(`Dependency ${dependency} of ${root.name ?? manifestPath} is not installed (run npm install)`);
    }
    // Workspace packages are symlinks; the real path is where their code is, and what Node's loader reports.
    const directory = await realpath(located);
    const candidate = toCandidate(await readManifest(directory), directory);
    if (candidate) candidates.push(candidate);
  }
  return candidates;
}

async function isDirectory(path: string): Promise<boolean> {
  return (await stat(path).catch(() => undefined))?.isDirectory() ?? false;
}

/** Package directories directly under `dir`, descending one level into `@scope` folders. */
async function packageDirectories(dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of (await readdir(dir)).sort()) {
    const path = join(dir, entry);
    if (!(await isDirectory(path))) continue;
    if (entry.startsWith('@')) found.push(...(await packageDirectories(path)));
    else if (existsSync(join(path, 'package.json'))) found.push(path);
  }
  return found;
}

/** Adapter candidates in `HOLDFAST_PLUGIN_DIR`: every sub-directory whose package.json has a `holdfast` block. */
export async function pluginDirCandidates(pluginDir: string): Promise<AdapterCandidate[]> {
  const dir = resolve(pluginDir);
  if (!(await isDirectory(dir))) {
    throw new Error(`HOLDFAST_PLUGIN_DIR ${dir} does not exist or is not a directory`);
  }
  const candidates: AdapterCandidate[] = [];
  for (const directory of await packageDirectories(dir)) {
    const candidate = toCandidate(await readManifest(directory), directory);
    if (candidate) candidates.push(candidate);
  }
  return candidates;
}
