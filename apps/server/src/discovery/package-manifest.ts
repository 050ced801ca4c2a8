import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ADAPTER_ID_PATTERN, ADAPTER_KINDS, type AdapterPackageManifest } from '@holdfast/kernel';

/** The parts of a package.json discovery reads. */
export interface PackageManifest {
  name?: string;
  version?: string;
  main?: string;
  exports?: unknown;
  dependencies?: Record<string, string>;
  holdfast?: unknown;
}

/** An adapter package found on disk, before its code is imported. */
export interface AdapterCandidate {
  packageName: string;
  version: string;
  directory: string;
  manifest: PackageManifest;
  block: AdapterPackageManifest;
}

/** Reads and parses `<directory>/package.json`; the error names the file. */
export async function readManifest(directory: string): Promise<PackageManifest> {
  const file = join(directory, 'package.json');
  try {
    return JSON.parse(await readFile(file, 'utf8')) as PackageManifest;
  } catch (error) {
    throw new Error(`Cannot read ${file}: ${(error as Error).message}`);
  }
}

/** Label used in every discovery error: the package name and where it lives. */
export function describePackage(name: string, directory: string): string {
  return `Adapter package ${name} (${directory})`;
}

/**
 * Turns a package.json into a candidate when it has a `holdfast` block; `undefined` for ordinary packages.
 * A malformed block is an error naming the package, because its author clearly meant it to be an adapter.
 */
export function toCandidate(manifest: PackageManifest, directory: string): AdapterCandidate | undefined {
  if (manifest.holdfast === undefined) return undefined;
  const name = manifest.name ?? directory;
  const block = manifest.holdfast as Partial<AdapterPackageManifest> | null;
  if (!block || !(ADAPTER_KINDS as readonly string[]).includes(block.kind as string)) {
    throw new Error(
      `${describePackage(name, directory)}: package.json "holdfast.kind" must be one of ${ADAPTER_KINDS.join(', ')}`,
    );
  }
  if (typeof block.id !== 'string' || !ADAPTER_ID_PATTERN.test(block.id)) {
    throw new Error(`${describePackage(name, directory)}: package.json "holdfast.id" must be a kebab-case id`);
  }
  return {
    packageName: name,
    version: manifest.version ?? '0.0.0',
    directory,
    manifest,
    block: { kind: block.kind as AdapterPackageManifest['kind'], id: block.id },
  };
}

// Conditions tried in order when `exports` is a conditions object; these are the ones Node's ESM loader honours.
const ENTRY_CONDITIONS = ['node', 'import', 'default'] as const;

function pickExport(target: unknown): string | undefined {
  if (typeof target === 'string') return target;
  if (typeof target !== 'object' || target === null || Array.isArray(target)) return undefined;
  const conditions = target as Record<string, unknown>;
  for (const condition of ENTRY_CONDITIONS) {
    const picked = pickExport(conditions[condition]);
    if (picked) return picked;
  }
  return undefined;
}

/**
 * The file to import for a package: the `.` export (string or `node`/`import`/`default` condition), else `main`,
 * else `index.js`. Only the root entry matters, so the full exports algorithm (subpaths, patterns) is not needed.
 */
export function packageEntry(candidate: AdapterCandidate): string {
  const exportsField = candidate.manifest.exports;
  const rootExport =
    typeof exportsField === 'object' && exportsField !== null && '.' in exportsField
      ? (exportsField as Record<string, unknown>)['.']
      : exportsField;
  const entry = pickExport(rootExport) ?? candidate.manifest.main ?? 'index.js';
  return join(candidate.directory, entry);
}
