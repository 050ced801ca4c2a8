import { existsSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The packages a generated adapter installs for development, by package.json key. With an installation, each one
 * becomes a `file:` link to the installation's own copy: no registry is needed (nothing of Holdfast is published),
 * `npm install --offline` works, and the testkit and the package's tests share one vitest. The testkit registers
 * its `describe`/`it` blocks with the vitest it imports, so a second vitest copy in the package would run a suite
 * that sees none of them.
 */
export const LINKED_PACKAGES = [
  '@holdfast/sdk',
  '@holdfast/testkit',
  '@types/node',
  'reflect-metadata',
  'typescript',
  'vitest',
] as const;

/** A package of {@link LINKED_PACKAGES}. */
export type LinkedPackage = (typeof LINKED_PACKAGES)[number];

/** Real directories of the installation's copies, by package name. */
export type InstallationLinks = Readonly<Record<LinkedPackage, string>>;

/** This package's own directory (above src/ and dist/); Node's lookup from here is the installation's. */
const SCAFFOLDER_ROOT = fileURLToPath(new URL('../', import.meta.url));

/**
 * Finds each package the way Node would from `fromDirectory` (every `node_modules` upwards), reading package.json
 * directly because `exports` maps hide it. Returns `undefined` when any is missing: then this scaffolder does not
 * run from a Holdfast installation, and the generated package takes registry ranges instead.
 */
export function findInstallation(fromDirectory: string = SCAFFOLDER_ROOT): InstallationLinks | undefined {
  const lookup = createRequire(join(fromDirectory, 'package.json'));
  const found: Partial<Record<LinkedPackage, string>> = {};
  for (const name of LINKED_PACKAGES) {
    const directory = (lookup.resolve.paths(name) ?? [])
      .map((base) => join(base, name))
      .find((candidate) => existsSync(join(candidate, 'package.json')));
    if (!directory) return undefined;
    // Workspace packages are symlinks into the source tree; link to where the code is.
    found[name] = realpathSync(directory);
  }
  return found as InstallationLinks;
}

/**
 * Files a `file:` linked sdk or testkit must have for the generated package to typecheck and run: an installation
 * started with `npm start` only has JavaScript (tooling/scripts/build-fast.mjs writes no declarations).
 */
export function missingBuildOutputs(links: InstallationLinks): string[] {
  return (['@holdfast/sdk', '@holdfast/testkit'] as const)
    .flatMap((name) => ['dist/index.js', 'dist/index.d.ts'].map((file) => join(links[name], file)))
    .filter((file) => !existsSync(file));
}
