// Rules of the boot's wiring (ARCHITECTURE.md, "Feature plugins and their lifecycle") as pure functions over file
// texts: each returns one message per violation naming the file and what to do instead.

/** A file's path from the repository root and its text. */
export interface WiringFile {
  file: string;
  text: string;
}

/** The services `composeHoldfast` registers itself (platform/boot/src/core-services.ts). */
export const CORE_SERVICE_TOKENS = ['Logger', 'EventBus', 'AdapterRegistry', 'RuntimeConfig'] as const;

/** The one file allowed to register the core services. */
export const CORE_SERVICES_HOME = 'platform/boot/src/core-services.ts';

/** This rule's own files, whose examples spell the pattern out. */
const RULE_FILES = new Set(['tooling/test/wiring-rules.ts', 'tooling/test/wiring-rules.test.ts']);

/**
 * Nobody but the boot registers the core services: a server, CLI, bench or test harness hands them to
 * `composeHoldfast({ core })` instead of writing its own prelude (registering `TOKENS.Logger` and the rest itself).
 */
export function corePreludeViolations(files: readonly WiringFile[]): string[] {
  const prelude = new RegExp(`\\.register\\(\\s*TOKENS\\.(${CORE_SERVICE_TOKENS.join('|')})\\b`);
  const problems: string[] = [];
  for (const { file, text } of files) {
    if (file === CORE_SERVICES_HOME || RULE_FILES.has(file)) continue;
    text.split('\n').forEach((line, index) => {
      const found = prelude.exec(line);
      if (found) problems.push(`${file}:${index + 1} registers TOKENS.${found[1]} by hand; pass it to composeHoldfast({ core }) instead`);
    });
  }
  return problems;
}

/** The text without comments, so a token named in a doc comment is not taken for a use. */
export function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

function tokensIn(text: string): Set<string> {
  return new Set([...withoutComments(text).matchAll(/\bTOKENS\.([A-Za-z]+)\b/g)].map((match) => match[1]!));
}

/** The `TOKENS.*` names inside the `provides: [...]` and `requires: [...]` lists of a plugin definition. */
export function declaredTokens(pluginSource: string): Set<string> {
  const text = withoutComments(pluginSource);
  const declared = new Set<string>();
  for (const list of text.matchAll(/\b(?:provides|requires):\s*\[([\s\S]*?)\]\s*,/g)) {
    for (const token of tokensIn(list[1]!)) declared.add(token);
  }
  return declared;
}

/**
 * Every `TOKENS.*` a plugin's `src` names (outside comments) is one it declares in `requires` or `provides`, so the
 * composition checks it before anything starts instead of a request failing on a missing service.
 */
export function undeclaredTokenViolations(plugin: string, pluginSource: string, sources: readonly WiringFile[]): string[] {
  const declared = declaredTokens(pluginSource);
  const problems: string[] = [];
  for (const { file, text } of sources) {
    for (const token of tokensIn(text)) {
      if (!declared.has(token)) {
        problems.push(`${plugin} ${file} uses TOKENS.${token}, which its plugin does not declare in requires or provides`);
      }
    }
  }
  return problems;
}
