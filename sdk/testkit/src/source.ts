import { disabledGroups, registerChecks, skippedChecks, type ConformanceCheck } from './checks.js';
import { sourceChecks } from './source/checks.js';
import { SOURCE_CHECK_GROUPS, type SourceCheckGroup, type SourceSuiteOptions } from './source/harness.js';

export { SOURCE_CHECK_GROUPS, type SourceCheckGroup, type SourceSuiteOptions } from './source/harness.js';

/** The source checks that apply, as a list (for running programmatically). */
export function sourceAdapterChecks<S, C>(options: SourceSuiteOptions<S, C>): ConformanceCheck<SourceCheckGroup>[] {
  const disabled = options.disable ?? [];
  const unknownGroups = disabled.filter((group) => !SOURCE_CHECK_GROUPS.includes(group));
  if (unknownGroups.length > 0) throw new Error(`unknown source check groups in disable: ${unknownGroups.join(', ')}`);
  return sourceChecks(options as SourceSuiteOptions<unknown>).filter((check) => !disabled.includes(check.group));
}

/** Registers the source conformance suite with vitest: round trip, connect failure, abort, health and discovery. */
export function describeSourceAdapter<S, C>(name: string, options: SourceSuiteOptions<S, C>): void {
  const loose = options as SourceSuiteOptions<unknown>;
  const skipped = skippedChecks(sourceChecks(loose), disabledGroups(options.disable, options.disableReasons));
  registerChecks(`source conformance: ${name}`, sourceAdapterChecks(options), skipped);
}
