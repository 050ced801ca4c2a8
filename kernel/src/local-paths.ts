import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/**
 * What a local path is used for. `storage`: the root of a destination (read, written and deleted through the API);
 * `restore-target`: a folder a restore writes into; `source`: a path a source reads (and restores back to).
 */
export type LocalPathUse = 'storage' | 'restore-target' | 'source';

/**
 * The operator's rule for local paths, provided by the host (apps/server) in every {@link AdapterContext} and under
 * `TOKENS.LocalPathPolicy`. Adapters that take a local path call it before they touch the path, so a saved config
 * that was allowed once cannot reach the data directory after a symlink or a setting changed.
 */
export interface LocalPathPolicy {
  /** Resolves `path` (symlinks included) and answers the real path, or throws {@link LocalPathRefusedError}. */
  check(path: string, use: LocalPathUse): Promise<string>;
}

/** A local path the policy refuses; the message says why and which setting allows it, never more. */
export class LocalPathRefusedError extends Error {
  override readonly name = 'LocalPathRefusedError';
}

/** Inputs of {@link createLocalPathPolicy}. */
export interface LocalPathRules {
  /** Absolute folders destinations and restore targets must live in. */
  allowedRoots: readonly string[];
  /** Paths never inside (nor containing) a destination, restore target or source: data dir, key file, database. */
  protectedPaths: readonly string[];
  /** Lets sources read the protected paths (the operator backs up Holdfast's own data dir on purpose). */
  isProtectedSourceAllowed?: boolean;
  /** Name of the setting that lists the allowed roots, quoted in refusals. */
  rootsSetting?: string;
  /** Name of the setting that opts sources in, quoted in refusals. */
  protectedSourceSetting?: string;
}

/** True when `inner` is `outer` or below it (both absolute and resolved). */
export function isPathInside(inner: string, outer: string): boolean {
  const rel = relative(outer, inner);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * The real path of `path`: symlinks resolved for the part that exists, the missing rest appended as written (a
 * restore target may not exist yet; its nearest existing ancestor decides where it really lands).
 */
export async function resolveRealPath(path: string): Promise<string> {
  const absolute = resolve(path);
  let existing = absolute;
  const missing: string[] = [];
  for (;;) {
    try {
      return join(await realpath(existing), ...missing.reverse());
    } catch (error) {
      const code = (error as { code?: string }).code;
      const parent = dirname(existing);
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || parent === existing) return absolute;
      missing.push(existing.slice(parent.length).replace(/^[/\\]/, ''));
      existing = parent;
    }
  }
}

/** Builds the policy; paths are resolved at each check, so links created after start are seen. */
export function createLocalPathPolicy(rules: LocalPathRules): LocalPathPolicy {
  const rootsSetting = rules.rootsSetting ?? 'HOLDFAST_LOCAL_ROOTS';
  const sourceSetting = rules.protectedSourceSetting ?? 'HOLDFAST_ALLOW_DATA_DIR_SOURCE';
  return {
    async check(path, use) {
      if (typeof path !== 'string' || path.trim() === '' || path.includes('\0')) {
        throw new LocalPathRefusedError('the path is empty or holds a NUL character');
      }
      const real = await resolveRealPath(path);
      const isSourceExempt = use === 'source' && rules.isProtectedSourceAllowed === true;
      if (!isSourceExempt) {
        for (const protectedPath of rules.protectedPaths) {
          const guarded = await resolveRealPath(protectedPath);
          if (isPathInside(real, guarded) || isPathInside(guarded, real)) {
            const hint = use === 'source' ? ` (set ${sourceSetting}=true to back up Holdfast's own data on purpose)` : '';
            throw new LocalPathRefusedError(
              `${path} is or contains Holdfast's data directory, system key or database, which no ${use} may reach${hint}`,
            );
          }
        }
      }
      if (use === 'source') return real;
      const roots = await Promise.all(rules.allowedRoots.map((root) => resolveRealPath(root)));
      if (!roots.some((root) => isPathInside(real, root))) {
        const allowed = rules.allowedRoots.length > 0 ? rules.allowedRoots.join(', ') : '(none)';
        throw new LocalPathRefusedError(`${path} is outside the folders allowed for local paths (${rootsSetting}: ${allowed})`);
      }
      return real;
    },
  };
}
