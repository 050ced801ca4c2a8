// Issue 43: the point-in-time archive's events reach the system notifications, enabled by default, with messages
// that say what broke and what to do.
import { startHttpReceiver, type HttpReceiver } from '@holdfast/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYSTEM_EVENT_DEFAULTS, systemPayload } from '../src/dispatch/messages.js';
import { startNotificationServer, type NotificationServer } from './support/harness.js';

const job = { jobId: 'job-1', jobName: 'cluster' };

describe('pitr_* system notifications', () => {
  let server: NotificationServer;
  let hook: HttpReceiver;

  beforeAll(async () => {
    [server, hook] = await Promise.all([startNotificationServer('sqlite', { sendTimeoutMs: 5_000 }), startHttpReceiver()]);
    server.catalog.addChannel('hook', 'generic-webhook', { webhookUrl: `${hook.url}/hook` });
  });
  afterAll(async () => {
    await server.close();
    await hook.close();
  });

  it('are enabled by default and delivered to the global channels with their titles', async () => {
    for (const name of ['pitr_gap', 'pitr_stream_stopped', 'pitr_slot_missing', 'pitr_lag'] as const) expect(SYSTEM_EVENT_DEFAULTS[name]).toBe(true);
    server.settings.set('notifications.config', { globalChannels: ['hook'], events: {} });
    await server.events.emit('pitr_gap', { ...job, message: 'Segments 5 to 6 were never archived.', lastArchived: '000000010000000000000004', nextAvailable: '000000010000000000000007' });
    await server.events.emit('pitr_stream_stopped', { ...job, message: 'The change-log stream of job "cluster" stopped: connection refused', error: 'connection refused' });
    await server.events.emit('pitr_slot_missing', { ...job, message: 'The slot holdfast_job_1 does not exist.', slot: 'holdfast_job_1' });
    await server.events.emit('pitr_lag', { ...job, message: 'The slot holds 2 GiB.', bytes: 2 * 1024 ** 3, thresholdBytes: 1024 ** 3 });
    await server.service.idle();
    const bodies = hook.requests.map((request) => JSON.parse(request.body.toString()));
    expect(bodies.map((body) => body.eventType)).toEqual(['pitr_gap', 'pitr_stream_stopped', 'pitr_slot_missing', 'pitr_lag']);
    expect(bodies.map((body) => body.title)).toEqual(['WAL archive gap: cluster', 'WAL stream stopped: cluster', 'Replication slot missing: cluster', 'WAL stream falling behind: cluster']);
  });

  it('say what to do, with the facts as fields', () => {
    const gap = systemPayload('pitr_gap', { ...job, message: 'Segments 5 to 6 were never archived.', lastArchived: '000000010000000000000004' });
    expect(gap.message).toMatch(/^Segments 5 to 6 were never archived\. Restores cannot cross the gap; run a new base backup of job "cluster"/);
    expect(gap.fields).toEqual(expect.arrayContaining([{ name: 'Last archived', value: '000000010000000000000004', inline: true }]));
    expect(gap.success).toBe(false);
    const lag = systemPayload('pitr_lag', { ...job, message: 'Behind.', bytes: 1536 * 1024 ** 2, thresholdBytes: 1024 ** 3 });
    expect(lag.fields).toEqual(expect.arrayContaining([{ name: 'Slot lag', value: '1.5 GB', inline: true }, { name: 'Threshold', value: '1.0 GB', inline: true }]));
    expect(lag.color).toBe('#f59e0b');
    const missing = systemPayload('pitr_slot_missing', { ...job, message: 'Gone.', slot: 'holdfast_job_1' });
    expect(missing.fields).toEqual(expect.arrayContaining([{ name: 'Slot', value: 'holdfast_job_1', inline: true }]));
    expect(missing.message).toMatch(/a new base backup of job "cluster" starts a new window/);
  });
});
