// Issue 45.4: which job, policy and destination updates count as protected changes (pure rules; the routes are
// tested through the assembled server in apps/server/test/protected-deletion.test.ts).
import { describe, expect, it } from 'vitest';
import { destinationChange, retentionChanges, sameRetention } from '../src/shared/protected-actions.js';

describe('protected changes', () => {
  it('a job destination kept with another policy or legacy retention is a change; the same settings, new or removed destinations are not', () => {
    const before = [
      { configId: 'a', retentionPolicyId: 'week', retention: {} },
      { configId: 'b', retentionPolicyId: null, retention: { mode: 'gfs', daily: 7 } },
    ];
    expect(retentionChanges(before, undefined)).toEqual([]);
    expect(retentionChanges(before, [{ configId: 'a', retentionPolicyId: 'week', retention: {} }, { configId: 'b', retention: { daily: 7, mode: 'gfs' } }])).toEqual([]);
    expect(retentionChanges(before, [{ configId: 'c', retentionPolicyId: 'day', retention: {} }])).toEqual([]);
    expect(retentionChanges(before, [{ configId: 'a', retentionPolicyId: 'day', retention: {} }]).map((change) => change.configId)).toEqual(['a']);
    expect(retentionChanges(before, [{ configId: 'b', retentionPolicyId: null, retention: { mode: 'gfs', daily: 30 } }]).map((change) => change.configId)).toEqual(['b']);
    expect(sameRetention({ mode: 'gfs', daily: 7 }, { daily: 7, mode: 'gfs' })).toBe(true);
    expect(sameRetention({ mode: 'gfs', daily: 7 }, { mode: 'gfs', daily: 7, weekly: 4 })).toBe(false);
  });

  it('a destination update is protected when its lock fields or its default retention policy change, not for other fields', () => {
    const stored = { config: { bucket: 'b', blockSize: 8, objectLockMode: 'GOVERNANCE', objectLockDays: 30 }, defaultRetentionPolicyId: 'week' };
    expect(destinationChange('d', stored, { config: { ...stored.config, bucket: 'other', blockSize: 16 } })).toBeNull();
    expect(destinationChange('d', stored, { config: stored.config, defaultRetentionPolicyId: 'week' })).toBeNull();
    expect(destinationChange('d', stored, { config: { ...stored.config, objectLockDays: 1 } })).toEqual({
      kind: 'destination.lock-change',
      resource: 'adapter',
      resourceId: 'd',
      details: { before: { objectLockDays: 30 }, after: { objectLockDays: 1 } },
    });
    const { objectLockMode: _dropped, ...withoutLock } = stored.config;
    expect(destinationChange('d', stored, { config: withoutLock })?.details).toEqual({ before: { objectLockMode: 'GOVERNANCE' }, after: { objectLockMode: null } });
    expect(destinationChange('d', stored, { config: { ...stored.config, immutabilityPolicyDays: 5 } })?.kind).toBe('destination.lock-change');
    expect(destinationChange('d', stored, { config: stored.config, defaultRetentionPolicyId: null })).toMatchObject({ kind: 'retention.change' });
  });
});
