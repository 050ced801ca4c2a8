import type { ConformanceCheck } from './checks.js';
import { registerChecks } from './checks.js';
import { capabilitiesOf, STORAGE_CHECK_GROUPS, type StorageCheckGroup, type StorageSuiteOptions } from './storage/harness.js';
import { dataChecks } from './storage/data-checks.js';
import { failureChecks } from './storage/failure-checks.js';
import { listingChecks } from './storage/listing-checks.js';

export { STORAGE_CHECK_GROUPS, type StorageCheckGroup, type StorageSuiteOptions } from './storage/harness.js';
export { ESCAPING_KEYS } from './storage/failure-checks.js';

/** Groups that do not apply, with the reason: switched off by the caller or not declared in capabilities. */
export function inactiveStorageGroups(options: StorageSuiteOptions<unknown>): Map<StorageCheckGroup, string> {
  const inactive = new Map<StorageCheckGroup, string>();
  for (const group of options.disable ?? []) inactive.set(group, 'disabled');
  if (!capabilitiesOf(options).rangeReads) inactive.set('range reads', 'capabilities.rangeReads is false');
  return inactive;
}

/** The storage checks that apply to this adapter, as a list (for running programmatically). */
export function storageAdapterChecks<C>(options: StorageSuiteOptions<C>): ConformanceCheck<StorageCheckGroup>[] {
  const loose = options as StorageSuiteOptions<unknown>;
  const unknownGroups = (options.disable ?? []).filter((group) => !STORAGE_CHECK_GROUPS.includes(group));
  if (unknownGroups.length > 0) {
    throw new Error(`unknown storage check groups in disable: ${unknownGroups.join(', ')} (known: ${STORAGE_CHECK_GROUPS.join(', ')})`);
  }
  const inactive = inactiveStorageGroups(loose);
  return [...dataChecks(loose), ...listingChecks(loose), ...failureChecks(loose)].filter((check) => !inactive.has(check.group));
}

/** Registers the storage conformance suite with vitest; every check runs on a fresh config from `options.config()`. */
export function describeStorageAdapter<C>(name: string, options: StorageSuiteOptions<C>): void {
  const inactive = inactiveStorageGroups(options as StorageSuiteOptions<unknown>);
  const notes = [...inactive].map(([group, reason]) => `${group}: ${reason}`);
  registerChecks(`storage conformance: ${name}`, storageAdapterChecks(options), notes);
}
