// The adapter SDK surface rule as a pure function, so its test can feed it a surface that broke the rule.

/**
 * The SDK's runtime exports may exceed the names adapter code imports by `spare` at most (the unused ones are
 * named, so the message says what to drop or where the host's names leaked in), and every imported name must
 * still be exported.
 */
export function sdkSurfaceViolations(runtimeExports: readonly string[], used: ReadonlyMap<string, readonly string[]>, spare: number): string[] {
  const problems: string[] = [];
  const exported = new Set(runtimeExports);
  const usedCount = [...used.keys()].filter((name) => exported.has(name)).length;
  const extra = runtimeExports.length - usedCount;
  if (extra > spare) {
    const unused = runtimeExports.filter((name) => !used.has(name)).sort((a, b) => a.localeCompare(b, 'en'));
    problems.push(
      `@holdfast/sdk exports ${runtimeExports.length} runtime names, ${extra} more than the ${usedCount} adapter code imports (allowed: ${spare} more); not imported by any adapter: ${unused.join(', ')}`,
    );
  }
  for (const [name, files] of used) {
    if (!exported.has(name)) problems.push(`@holdfast/sdk no longer exports ${name}, which ${files.join(', ')} imports`);
  }
  return problems;
}
