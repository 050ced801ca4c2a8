import { describe, it } from 'vitest';

/**
 * One conformance check: a named function that throws (an assertion error with a message for the adapter author)
 * when the adapter breaks the contract. Suites are lists of checks, so they can be registered as vitest tests or
 * run programmatically (the testkit's own tests run them against deliberately broken adapters).
 */
export interface ConformanceCheck<G extends string = string> {
  group: G;
  name: string;
  /** Per-check vitest timeout; the package default applies when absent. */
  timeoutMs?: number;
  run(): Promise<void>;
}

/** A check that does not run here (its group is switched off or not declared), with the reason. */
export interface SkippedCheck {
  group: string;
  name: string;
  reason: string;
}

/** The checks of `all` whose group is inactive, as skipped checks carrying the group's reason. */
export function skippedChecks(all: readonly ConformanceCheck[], inactive: ReadonlyMap<string, string>): SkippedCheck[] {
  return all.filter((check) => inactive.has(check.group)).map((check) => ({ group: check.group, name: check.name, reason: inactive.get(check.group)! }));
}

/** The reason of each group in `disable`: the caller's own words, or a default that says who switched it off. */
export function disabledGroups<G extends string>(disable: readonly G[] = [], reasons: Partial<Record<G, string>> = {}): Map<G, string> {
  return new Map(disable.map((group) => [group, reasons[group] ?? 'switched off by this adapter\'s test (disable option)']));
}

/**
 * Registers `checks` as one vitest `describe` block with one `it` per check, grouped by `group`. Checks that do not
 * run are registered as skipped tests whose names carry the reason, so the runner counts and shows them: a
 * switched-off group is never silently absent.
 */
export function registerChecks(title: string, checks: readonly ConformanceCheck[], skipped: readonly SkippedCheck[] = []): void {
  describe(title, () => {
    const groups = [...new Set([...checks, ...skipped].map((check) => check.group))];
    for (const group of groups) {
      describe(group, () => {
        for (const check of checks.filter((c) => c.group === group)) {
          it(check.name, () => check.run(), check.timeoutMs);
        }
        for (const check of skipped.filter((c) => c.group === group)) {
          it.skip(`${check.name} [skipped: ${check.reason}]`, () => undefined);
        }
      });
    }
  });
}

/** Finds one check by its name, part of its name, or its group (first check of it); for running one programmatically. */
export function findCheck<C extends ConformanceCheck>(checks: readonly C[], name: string): C {
  const found =
    checks.find((check) => check.name === name) ??
    checks.find((check) => check.name.includes(name)) ??
    checks.find((check) => check.group === name);
  if (!found) throw new Error(`no conformance check named "${name}"; known: ${checks.map((c) => c.name).join(' | ')}`);
  return found;
}
