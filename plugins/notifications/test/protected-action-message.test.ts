// Issue 45.4: the protected_action system event is on by default and renders who did what, and how it was allowed.
import { describe, expect, it } from 'vitest';
import { SYSTEM_EVENT_DEFAULTS, SYSTEM_EVENT_TYPES, systemPayload } from '../src/dispatch/messages.js';

describe('protected_action notification', () => {
  it('is a system event enabled by default, titled with the action and the file, with the actor and the proof', () => {
    expect(SYSTEM_EVENT_TYPES).toContain('protected_action');
    expect(SYSTEM_EVENT_DEFAULTS.protected_action).toBe(true);
    const payload = systemPayload('protected_action', {
      action: 'backup.delete',
      resource: 'storage',
      resourceId: 'dest-1',
      actorName: 'Ada',
      userId: 'u1',
      via: 'session',
      proof: 'totp',
      details: { file: 'nightly.sql.gz' },
      timestamp: '2026-12-06T02:00:00.000Z',
    });
    expect(payload.title).toBe('Protected action: backup delete (nightly.sql.gz)');
    expect(payload.message).toContain('Ada');
    expect(payload.fields).toEqual(expect.arrayContaining([{ name: 'Proof', value: 'totp', inline: true }, { name: 'By', value: 'Ada (session)', inline: true }]));
    const none = systemPayload('protected_action', { action: 'encryption-profile.delete', resource: 'encryption-profile', resourceId: 'p1', actorName: 'Bob', userId: 'u2', via: 'session', proof: 'none', details: {}, timestamp: 'x' });
    expect(none.message).toMatch(/no second factor \(the user has none\)/);
  });
});
