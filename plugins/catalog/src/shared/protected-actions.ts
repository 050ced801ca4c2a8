import { resolveOptional, TOKENS, type ProtectedAction, type ProtectedActionGuard } from '@holdfast/kernel';
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

/** Config fields of a destination that hold its lock settings (S3 `objectLock*`, Azure immutability, legal holds). */
const LOCK_FIELD = /^(objectLock|lock)|immutab|legalHold/i;

/**
 * The protected action an update of a storage destination takes, or null: a change of its lock settings (config
 * fields named `objectLock*`, `lock*`, `*immutab*` or `*legalHold*`, compared as they would be stored) or of its default retention policy. Decision (issue 45.4): raised or lowered alike.
 */
export function destinationChange(
  id: string,
  before: { config: Record<string, unknown>; defaultRetentionPolicyId: string | null },
  body: { config?: Record<string, unknown>; defaultRetentionPolicyId?: string | null },
): ProtectedAction | null {
  if (body.config) {
    const keys = [...new Set([...Object.keys(before.config), ...Object.keys(body.config)])].filter((key) => LOCK_FIELD.test(key));
    const changed = keys.filter((key) => canonical(before.config[key]) !== canonical(body.config![key]));
    if (changed.length > 0) {
      const pick = (config: Record<string, unknown>) => Object.fromEntries(changed.map((key) => [key, config[key] ?? null]));
      return { kind: 'destination.lock-change', resource: 'adapter', resourceId: id, details: { before: pick(before.config), after: pick(body.config) } };
    }
  }
  if (body.defaultRetentionPolicyId !== undefined && (body.defaultRetentionPolicyId ?? null) !== before.defaultRetentionPolicyId) {
    return { kind: 'retention.change', resource: 'adapter', resourceId: id, details: { defaultRetentionPolicyId: { before: before.defaultRetentionPolicyId, after: body.defaultRetentionPolicyId ?? null } } };
  }
  return null;
}
