import { resolveOptional, TOKENS, type ProtectedActionGuard } from '@holdfast/kernel';
import type { CatalogDeps } from './deps.js';

/** The identity plugin's guard of actions that can lose backups (issue 45.4), when it is loaded. */
export function protectedActionGuard(deps: CatalogDeps): ProtectedActionGuard | undefined {
  return resolveOptional(deps.container, TOKENS.ProtectedActions);
}

/** The retention a destination of a job keeps, in a form where equal settings compare equal. */
interface DestinationRetention {
  configId: string;
  retention?: Record<string, unknown>;
  retentionPolicyId?: string | null;
}

function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined).sort(([a], [b]) => a.localeCompare(b));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value ?? null);
}

/** Whether two retention settings are the same, whatever their key order. */
export function sameRetention(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}

/**
 * The destinations (kept by the update) whose retention changes: a different policy, or different legacy retention
 * JSON. Decision (issue 45.4, "lowering retention"): any change counts, raised or lowered, because whether a policy
 * keeps fewer backups depends on the backups there; a destination removed from the job is not a change (retention no
 * longer runs there, so it keeps more), nor is a new one (this job's retention never ran there).
 */
export function retentionChanges(before: readonly DestinationRetention[], after: readonly DestinationRetention[] | undefined): Array<{ configId: string; before: unknown; after: unknown }> {
  if (!after) return [];
  const old = new Map(before.map((d) => [d.configId, d]));
  const changes: Array<{ configId: string; before: unknown; after: unknown }> = [];
  for (const next of after) {
    const prior = old.get(next.configId);
    if (!prior) continue;
    const was = { retentionPolicyId: prior.retentionPolicyId ?? null, retention: prior.retention ?? {} };
    const now = { retentionPolicyId: next.retentionPolicyId ?? null, retention: next.retention ?? {} };
    if (canonical(was) !== canonical(now)) changes.push({ configId: next.configId, before: was, after: now });
  }
  return changes;
}
