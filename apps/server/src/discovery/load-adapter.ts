import { pathToFileURL } from 'node:url';
import { assertAdapterDefinition, type AdapterRegistry, type RegisteredAdapter } from '@holdfast/kernel';
import { describePackage, packageEntry, type AdapterCandidate } from './package-manifest.js';

/**
 * Imports a candidate's entry by file URL, checks its default export with the kernel (brand, apiVersion, shape),
 * checks it is the adapter its package.json announces, and registers it (the registry rejects duplicates).
 * Every failure is an error naming the package and its directory.
 */
export async function loadAdapter(candidate: AdapterCandidate, registry: AdapterRegistry): Promise<RegisteredAdapter> {
  const label = describePackage(candidate.packageName, candidate.directory);
  const entry = packageEntry(candidate);
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(entry).href)) as { default?: unknown };
  } catch (error) {
    throw new Error(`${label}: cannot import ${entry}: ${(error as Error).message}`);
  }
  const definition = module.default;
  assertAdapterDefinition(definition, label);
  const { kind, id } = candidate.block;
  if (definition.kind !== kind || definition.id !== id) {
    throw new Error(
      `${label}: package.json announces ${kind}-${id} but the default export defines ${definition.kind}-${definition.id}`,
    );
  }
  try {
    return registry.register(definition, {
      packageName: candidate.packageName,
      version: candidate.version,
      directory: candidate.directory,
    });
  } catch (error) {
    throw new Error(`${label}: ${(error as Error).message}`);
  }
}
