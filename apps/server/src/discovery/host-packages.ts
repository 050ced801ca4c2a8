import { realpath } from 'node:fs/promises';
import { register } from 'node:module';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Packages a plugin-dir adapter must share with the server: one kernel, one sdk (the brand, `secret()` markers,
 * the tokens), one tsyringe (the container and the injection metadata) and one Reflect metadata store. A second
 * copy of any of them would load without error and then fail at the first `resolve`.
 */
export const HOST_SHARED_PACKAGES = ['@holdfast/sdk', '@holdfast/kernel', 'tsyringe', 'reflect-metadata'] as const;

// The resolve hook, as source: Node runs hooks on its own loader thread and loads them by URL, so a data: URL
// works the same from dist/ and from src/ under vitest (where a .ts file could not be loaded there).
const HOOK_SOURCE = `
let roots = [];
let hostParentURL;
let shared = new Set();
export async function initialize(data) {
  roots = data.roots;
  hostParentURL = data.hostParentURL;
  shared = new Set(data.shared);
}
function packageName(specifier) {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}
export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL;
  if (parent && shared.has(packageName(specifier)) && roots.some((root) => parent.startsWith(root))) {
    return nextResolve(specifier, { ...context, parentURL: hostParentURL });
  }
  return nextResolve(specifier, context);
}
`;

const HOOK_URL = `data:text/javascript,${encodeURIComponent(HOOK_SOURCE)}`;
const sharedRoots = new Set<string>();

function directoryUrl(path: string): string {
  const url = pathToFileURL(path).href;
  return url.endsWith('/') ? url : `${url}/`;
}

/**
 * Makes every module under `pluginDir` resolve {@link HOST_SHARED_PACKAGES} as the server does, whether the
 * package has no node_modules at all (it imports only `@holdfast/sdk`), `file:` links to an installation, or its
 * own installed copies. Registered once per directory, before the first import from it; later imports of other
 * modules pass through unchanged. ESM only: Node's hooks do not see `require`, and adapters are ES modules.
 */
export async function shareHostPackagesWith(pluginDir: string, hostParentURL: string = import.meta.url): Promise<void> {
  const given = resolve(pluginDir);
  // Node's loader reports real paths, so a plugin dir reached through a symlink is matched by both spellings.
  const roots = [...new Set([directoryUrl(given), directoryUrl(await realpath(given).catch(() => given))])].filter(
    (root) => !sharedRoots.has(root),
  );
  if (roots.length === 0) return;
  register(HOOK_URL, { data: { roots, hostParentURL, shared: [...HOST_SHARED_PACKAGES] } });
  for (const root of roots) sharedRoots.add(root);
}
