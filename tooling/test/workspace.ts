// Reads the monorepo as the dependency rules see it: every workspace package, its manifest and the module
// specifiers its src/ files import. Used by dependency-rules.test.ts.
import { existsSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The parts of a package.json the rules read. */
export interface Manifest {
  name?: string;
  version?: string;
  private?: boolean;
  holdfast?: { kind?: unknown; id?: unknown };
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

/** One import found in a source file. */
export interface SourceImport {
  /** File relative to the package directory, `/`-separated. */
  file: string;
  specifier: string;
}

/** A workspace package as the rules see it. */
export interface WorkspacePackage {
  /** Directory relative to the repository root, `/`-separated, e.g. `adapters/storage-local`. */
  dir: string;
  name: string;
  manifest: Manifest;
  hasReadme: boolean;
  /** Imports of every `src/**\/*.ts(x)` file. */
  imports: SourceImport[];
}

/**
 * Expands the root `workspaces` entries. They are plain paths with `*` segments; anything richer throws, so a new
 * pattern cannot silently cover nothing.
 */
export async function expandWorkspacePatterns(root: string, patterns: readonly string[]): Promise<string[]> {
  const found = new Set<string>();
  for (const pattern of patterns) {
    if (/[?[\]{}!]|\*\*/.test(pattern) || pattern.split('/').some((s) => s.includes('*') && s !== '*')) {
      throw new Error(`workspace pattern "${pattern}" is not understood by tooling/test/workspace.ts; extend it`);
    }
    let dirs = [''];
    for (const segment of pattern.split('/')) {
      const next: string[] = [];
      for (const dir of dirs) {
        if (segment !== '*') {
          next.push(dir ? `${dir}/${segment}` : segment);
          continue;
        }
        const abs = join(root, dir);
        if (!existsSync(abs)) continue;
        for (const entry of await readdir(abs, { withFileTypes: true })) {
          if (entry.isDirectory() && !entry.name.startsWith('.') && entry.name !== 'node_modules') {
            next.push(dir ? `${dir}/${entry.name}` : entry.name);
          }
        }
      }
      dirs = next;
    }
    for (const dir of dirs) if (existsSync(join(root, dir, 'package.json'))) found.add(dir);
  }
  return [...found].sort();
}

async function sourceFiles(dir: string): Promise<string[]> {
  if (!existsSync(dir)) return [];
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && /\.(c|m)?tsx?$/.test(e.name) && !e.name.endsWith('.d.ts'))
    .map((e) => join(e.parentPath, e.name))
    .filter((file) => !file.split(sep).includes('node_modules'));
}

/** Every module specifier a TypeScript file imports, re-exports, dynamically imports or requires. */
export function importsOf(text: string): string[] {
  const info = ts.preProcessFile(text, true, true);
  return info.importedFiles.map((f) => f.fileName);
}

/** Reads one workspace package: manifest, README presence and the imports of its `src/`. */
export async function readWorkspacePackage(root: string, dir: string): Promise<WorkspacePackage> {
  const abs = join(root, dir);
  const manifest = JSON.parse(await readFile(join(abs, 'package.json'), 'utf8')) as Manifest;
  const imports: SourceImport[] = [];
  for (const file of await sourceFiles(join(abs, 'src'))) {
    const rel = relative(abs, file).split(sep).join('/');
    for (const specifier of importsOf(await readFile(file, 'utf8'))) imports.push({ file: rel, specifier });
  }
  return { dir, name: manifest.name ?? dir, manifest, hasReadme: existsSync(join(abs, 'README.md')), imports };
}

/** Every workspace package named by the root package.json, read. */
export async function readWorkspace(root = REPO_ROOT): Promise<WorkspacePackage[]> {
  const rootManifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as { workspaces?: string[] };
  const dirs = await expandWorkspacePatterns(root, rootManifest.workspaces ?? []);
  return Promise.all(dirs.map((dir) => readWorkspacePackage(root, dir)));
}

/** `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`; undefined for relative and absolute paths. */
export function packageOfSpecifier(specifier: string): string | undefined {
  if (specifier.startsWith('.') || specifier.startsWith('/')) return undefined;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

/** True for `node:fs`, `fs`, `fs/promises` and the like. */
export function isNodeBuiltin(specifier: string): boolean {
  if (specifier.startsWith('node:')) return true;
  return builtinModules.includes(specifier) || builtinModules.includes(specifier.split('/')[0] ?? '');
}
