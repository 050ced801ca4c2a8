// The npm registry mirror reachable here lacks the other platforms' builds of packages such as
// @rollup/rollup-<platform>, so `npm install` leaves them out of package-lock.json while their parents still
// list them as optional dependencies, and `npm ci` then refuses the lock ("Missing: ... from lock file").
// This adds a minimal optional entry for each missing one; `npm ci` skips optional packages it cannot fetch.
// Run after every dependency change: `npm run lock:complete` (a test in tooling/test checks it was run).
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Returns the optional dependencies that have no entry in the lock, as `[lockPath, version, isDev]`. */
export function missingOptionalEntries(lock) {
  const packages = lock.packages ?? {};
  const missing = new Map();
  for (const [path, meta] of Object.entries(packages)) {
    for (const [name, version] of Object.entries(meta.optionalDependencies ?? {})) {
      const nested = `${path ? `${path}/` : ''}node_modules/${name}`;
      const hoisted = `node_modules/${name}`;
      if (packages[nested] || packages[hoisted] || missing.has(hoisted)) continue;
      missing.set(hoisted, [hoisted, version, meta.dev === true]);
    }
  }
  return [...missing.values()];
}

/** Adds the missing optional entries in place; returns how many were added. */
export function completeLockfile(lock) {
  const missing = missingOptionalEntries(lock);
  for (const [path, version, isDev] of missing) {
    lock.packages[path] = { version, optional: true, ...(isDev ? { dev: true } : {}) };
  }
  const [rootEntry, ...rest] = Object.entries(lock.packages);
  lock.packages = Object.fromEntries([rootEntry, ...rest.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);
  return missing.length;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = fileURLToPath(new URL('../../package-lock.json', import.meta.url));
  const lock = JSON.parse(readFileSync(file, 'utf8'));
  const added = completeLockfile(lock);
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  process.stdout.write(`package-lock.json: added ${added} optional entries\n`);
}
