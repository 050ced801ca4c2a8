import { afterEach, describe, expect, it } from 'vitest';
import type { EntityManager } from '@mikro-orm/core';
import { AuditLogEntity } from '../src/entities/audit-log.js';
import { DIALECTS, openDatabase, type TestDatabase } from './support/database.js';
import { Client, setUpAdmin, startIdentityApp, type RunningIdentityApp } from './support/http.js';

let db: TestDatabase | undefined;
let app: RunningIdentityApp | undefined;
afterEach(async () => {
  await app?.close();
  await db?.close();
  app = undefined;
  db = undefined;
});

describe.each(DIALECTS)('audit log on %s', (dialect) => {
  it('records login, user, group and every api-key action, readable with filters and paging via /api/audit', async () => {
    db = await openDatabase(dialect);
    app = await startIdentityApp(db);
    const admin = await setUpAdmin(app);
    const group = (await admin.call('POST', '/api/groups', { json: { name: 'auditors', permissions: ['audit:read'] } })).body;
    const user = (await admin.call('POST', '/api/users', { json: { name: 'Aud', email: 'aud@example.test', password: 'auditor pass', groupId: group.id } })).body;
    const issued = (await admin.call('POST', '/api/api-keys', { json: { name: 'ci', permissions: ['audit:read'] } })).body;
    const keyId = issued.apiKey.id as string;
    await admin.call('PATCH', `/api/api-keys/${keyId}`, { json: { enabled: false } });
    await admin.call('PATCH', `/api/api-keys/${keyId}`, { json: { enabled: true } });
    const rotated = (await admin.call('POST', `/api/api-keys/${keyId}/rotate`)).body;
    await admin.call('PUT', `/api/api-keys/${keyId}/permissions`, { json: { permissions: ['audit:read', 'users:read'] } });
    // The key reads the audit log itself: an auditor script.
    const viaKey = await new Client(app.url).call('GET', `/api/audit?resource=api-key&pageSize=100`, { bearer: rotated.key });
    expect(viaKey.status).toBe(200);
    expect(viaKey.body.entries.map((e: { action: string }) => e.action)).toEqual([
      'api-key.update-permissions',
      'api-key.rotate',
      'api-key.toggle',
      'api-key.toggle',
      'api-key.create',
    ]);
    for (const entry of viaKey.body.entries) {
      expect(entry).toMatchObject({ resourceId: keyId, ipAddress: '127.0.0.1', userAgent: expect.any(String) });
    }
    expect(JSON.parse(viaKey.body.entries[2].details)).toMatchObject({ enabled: true, authMethod: 'session' });
    expect(JSON.parse(viaKey.body.entries[3].details)).toMatchObject({ enabled: false, authMethod: 'session' });
    await admin.call('DELETE', `/api/api-keys/${keyId}`);

    const auditor = new Client(app.url);
    await auditor.signIn('aud@example.test', 'auditor pass');
    const all = (await auditor.call('GET', '/api/audit?pageSize=100')).body;
    const actions = all.entries.map((e: { action: string; resource: string }) => `${e.action} ${e.resource}`);
    for (const expected of ['CREATE user', 'LOGIN session', 'CREATE group', 'api-key.delete api-key']) expect(actions).toContain(expected);
    expect(all.total).toBe(all.entries.length);

    const logins = (await auditor.call('GET', `/api/audit?action=LOGIN&userId=${user.id}`)).body;
    expect(logins.total).toBe(1);
    const page = (await auditor.call('GET', '/api/audit?page=2&pageSize=3')).body;
    expect(page).toMatchObject({ page: 2, pageSize: 3, total: all.total });
    expect(page.entries.map((e: { id: string }) => e.id)).toEqual(all.entries.slice(3, 6).map((e: { id: string }) => e.id));
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await auditor.call('GET', `/api/audit?from=${encodeURIComponent(future)}`)).body.total).toBe(0);
    expect((await auditor.call('GET', '/api/audit?from=yesterday')).status).toBe(400);
    expect((await auditor.call('GET', '/api/audit?pageSize=100000')).status).toBe(400);

    const noPermission = new Client(app.url);
    await admin.call('POST', '/api/users', { json: { name: 'Nobody', email: 'nobody@example.test', password: 'nobody pass' } });
    await noPermission.signIn('nobody@example.test', 'nobody pass');
    expect((await noPermission.call('GET', '/api/audit')).status).toBe(403);
  });

  it('housekeeping prunes entries older than audit.retentionDays and keeps newer ones', async () => {
    db = await openDatabase(dialect);
    app = await startIdentityApp(db);
    const em = db.database.em() as EntityManager;
    const day = 24 * 60 * 60 * 1000;
    for (const [id, age] of [['old', 40 * day], ['recent', 5 * day]] as const) {
      em.create(AuditLogEntity, { id, action: 'UPDATE', resource: 'job', createdAt: new Date(Date.now() - age) });
    }
    await em.flush();
    app.settings.set('audit.retentionDays', '30');
    const removed = await app.services.housekeeping.runOnce();
    expect(removed['audit-retention']).toBe(1);
    const left = await (db.database.em() as EntityManager).find(AuditLogEntity, {});
    expect(left.map((e) => e.id)).toEqual(['recent']);
  });
});

describe.each(DIALECTS)('the kernel AuditWriter port on %s', (dialect) => {
  it('writes entries other plugins send through TOKENS.AuditWriter, readable via /api/audit', async () => {
    db = await openDatabase(dialect);
    app = await startIdentityApp(db);
    const admin = await setUpAdmin(app);
    const { TOKENS } = await import('@holdfast/kernel');
    const writer = app.container.resolve(TOKENS.AuditWriter);
    await writer.write({ action: 'EXECUTE', resource: 'job', resourceId: 'job-42', details: { trigger: 'api', apiKeyId: 'k1' }, ipAddress: '10.1.2.3' });
    const page = (await admin.call('GET', '/api/audit?resource=job')).body;
    expect(page.entries).toHaveLength(1);
    expect(page.entries[0]).toMatchObject({ action: 'EXECUTE', resource: 'job', resourceId: 'job-42', ipAddress: '10.1.2.3' });
    expect(JSON.parse(page.entries[0].details)).toEqual({ trigger: 'api', apiKeyId: 'k1' });
  });
});
