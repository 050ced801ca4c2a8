// Issue 48: agent_online / agent_offline are system events enabled by default that name the agent, its host and,
// going offline, the reason.
import { describe, expect, it } from 'vitest';
import { COLORS, SYSTEM_EVENT_DEFAULTS, SYSTEM_EVENT_TYPES, systemPayload } from '../src/dispatch/messages.js';

describe('agent presence notifications', () => {
  it('are system events enabled by default, titled with the agent, with the host and the reason', () => {
    expect(SYSTEM_EVENT_TYPES).toEqual(expect.arrayContaining(['agent_online', 'agent_offline']));
    expect(SYSTEM_EVENT_DEFAULTS.agent_online).toBe(true);
    expect(SYSTEM_EVENT_DEFAULTS.agent_offline).toBe(true);
    const online = systemPayload('agent_online', { agentId: 'a1', agentName: 'warehouse-db', host: 'db-1.internal', timestamp: '2026-12-07T02:00:00.000Z' });
    expect(online).toMatchObject({ title: 'Agent online: warehouse-db', message: 'The agent warehouse-db connected from db-1.internal.', success: true, color: COLORS.success });
    const offline = systemPayload('agent_offline', { agentId: 'a1', agentName: 'warehouse-db', host: null, reason: 'no answer to pings', timestamp: '2026-12-07T02:05:00.000Z' });
    expect(offline).toMatchObject({ title: 'Agent offline: warehouse-db', message: 'The agent warehouse-db disconnected (no answer to pings).', success: false, color: COLORS.partial });
    expect(offline.fields).toEqual(expect.arrayContaining([{ name: 'Reason', value: 'no answer to pings' }, { name: 'Host', value: '', inline: true }]));
  });
});
