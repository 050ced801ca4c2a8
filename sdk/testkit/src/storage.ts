import type { ConformanceCheck } from './checks.js';
import { disabledGroups, registerChecks, skippedChecks } from './checks.js';
import { capabilitiesOf, STORAGE_CHECK_GROUPS, type StorageCheckGroup, type StorageSuiteOptions } from './storage/harness.js';
import { dataChecks } from './storage/data-checks.js';
import { failureChecks } from './storage/failure-checks.js';
import { listingChecks } from './storage/listing-checks.js';

export { STORAGE_CHECK_GROUPS, type StorageCheckGroup, type StorageSuiteOptions } from './storage/harness.js';
export { ESCAPING_KEYS } from './storage/failure-checks.js';

/** Groups that do not apply, with the reason: switched off by the caller or not declared in capabilities. */
export function inactiveStorageGroups(options: StorageSuiteOptions<unknown>): Map<StorageCheckGroup, string> {
  const inactive = disabledGroups(options.disable, options.disableReasons);
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
  return allStorageChecks(loose).filter((check) => !inactive.has(check.group));
}

function allStorageChecks(options: StorageSuiteOptions<unknown>): ConformanceCheck<StorageCheckGroup>[] {
  return [...dataChecks(options), ...listingChecks(options), ...failureChecks(options)];
}

/** Registers the storage conformance suite with vitest; every check runs on a fresh config from `options.config()`. */
export function describeStorageAdapter<C>(name: string, options: StorageSuiteOptions<C>): void {
  const loose = options as StorageSuiteOptions<unknown>;
  const skipped = skippedChecks(allStorageChecks(loose), inactiveStorageGroups(loose));
  registerChecks(`storage conformance: ${name}`, storageAdapterChecks(options), skipped);
}
