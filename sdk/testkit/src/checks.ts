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

/** Registers `checks` as one vitest `describe` block with one `it` per check, grouped by `group`. */
export function registerChecks(title: string, checks: readonly ConformanceCheck[], disabled: readonly string[] = []): void {
  // Switched-off groups are named in the block title so a reader sees what was not run.
  const suffix = disabled.length > 0 ? ` (not run: ${disabled.join(', ')})` : '';
  describe(`${title}${suffix}`, () => {
    const groups = [...new Set(checks.map((check) => check.group))];
    for (const group of groups) {
      describe(group, () => {
        for (const check of checks.filter((c) => c.group === group)) {
          it(check.name, () => check.run(), check.timeoutMs);
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
