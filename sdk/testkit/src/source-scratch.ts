import { disabledGroups, registerChecks, skippedChecks, type ConformanceCheck } from './checks.js';
import { scratchChecks } from './source-scratch/checks.js';
import { SCRATCH_CHECK_GROUPS, type ScratchCheckGroup, type ScratchSuiteOptions } from './source-scratch/harness.js';

export { SCRATCH_CHECK_GROUPS, type ScratchCheckGroup, type ScratchSuiteOptions } from './source-scratch/harness.js';

/** The scratch checks that apply, as a list (for running programmatically). */
export function sourceScratchChecks<S, C>(options: ScratchSuiteOptions<S, C>): ConformanceCheck<ScratchCheckGroup>[] {
  const disabled = options.disable ?? [];
  const unknownGroups = disabled.filter((group) => !SCRATCH_CHECK_GROUPS.includes(group));
  if (unknownGroups.length > 0) throw new Error(`unknown scratch check groups in disable: ${unknownGroups.join(', ')}`);
  return scratchChecks(options as ScratchSuiteOptions<unknown>).filter((check) => !disabled.includes(check.group));
}

/**
 * Registers the scratch suite with vitest, for sources declaring `capabilities.scratchRestore` (test restores):
 * declaration, figures of the seeded database, a dump restored into a scratch with the same figures, and removal.
 */
export function describeSourceScratch<S, C>(name: string, options: ScratchSuiteOptions<S, C>): void {
  const skipped = skippedChecks(scratchChecks(options as ScratchSuiteOptions<unknown>), disabledGroups(options.disable, options.disableReasons));
  registerChecks(`source scratch: ${name}`, sourceScratchChecks(options), skipped);
}
