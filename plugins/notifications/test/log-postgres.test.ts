import { ORM_DATABASE } from '@holdfast/orm-port';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NotificationLogStore, type NotificationLogInput } from '../src/index.js';
import { startNotificationServer, type NotificationServer } from './support/harness.js';

// The log's table, newest-first paging, filters and pruning on PostgreSQL (the other suites use libsql).
let server: NotificationServer;
beforeEach(async () => {
  server = await startNotificationServer('postgresql');
});
afterEach(async () => {
  await server.close();
});

function entry(title: string, daysAgo: number, overrides: Partial<NotificationLogInput> = {}): Promise<void> {
  const at = new Date(Date.now() - daysAgo * 86_400_000);
  return new NotificationLogStore(() => server.container.resolve(ORM_DATABASE), () => at).write({
    eventType: 'backup_success', channelId: 'hook', channelName: 'Hook', adapterId: 'generic-webhook', status: 'Success', title, message: 'm', fields: [{ name: 'Job', value: title }], ...overrides,
  });
}

describe('notification log on postgresql', () => {
  it('pages newest first, filters, and prunes by retention days', async () => {
    await entry('old', 40);
    await entry('week', 7, { status: 'Failed', error: 'refused', executionId: 'exec-7' });
    await entry('today', 0);
    const page = await server.call('GET', '/api/notifications/log?pageSize=2', { token: 'perm:notifications:read' });
    expect(page.body).toMatchObject({ total: 3, entries: [{ title: 'today', fields: [{ name: 'Job', value: 'today' }] }, { title: 'week' }] });
    const failed = await server.call('GET', '/api/notifications/log?status=Failed&executionId=exec-7', { token: 'perm:notifications:read' });
    expect(failed.body.entries.map((row: { title: string }) => row.title)).toEqual(['week']);
    expect(await server.service.pruner.pruneNow()).toBe(1);
    expect((await server.service.store.list({ page: 1, pageSize: 10 })).entries.map((row) => row.title)).toEqual(['today', 'week']);
  });
});
