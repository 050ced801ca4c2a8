import { afterEach, describe, expect, it } from 'vitest';
import { defineRoute, TOKENS } from '@holdfast/kernel';
import { z } from 'zod';
import { openDatabase, type TestDatabase } from './support/database.js';
import { Client, setUpAdmin, startIdentityApp, type RunningIdentityApp } from './support/http.js';

let db: TestDatabase | undefined;
let app: RunningIdentityApp | undefined;
afterEach(async () => {
  await app?.close();
  await db?.close();
  app = undefined;
  db = undefined;
});

// Stand-ins for catalog routes: a scoped trigger and a list route that narrows with visibleIds.
const JOBS = ['job-a', 'job-b', 'job-c'];
const jobRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/jobs/:id/run',
    summary: 'test trigger',
    access: { permission: 'jobs:execute', scope: { resource: 'job', param: 'id' } },
    request: { params: z.object({ id: z.string() }) },
    responses: { 200: { description: 'ok' } },
    handler: (request) => ({ ran: request.params.id }),
  }),
];

describe('scoped grants and the access policy', () => {
  it('a group grant of jobs:execute on job A allows A and answers 403 on job B; visibleIds narrows lists', async () => {
    db = await openDatabase('sqlite');
    app = await startIdentityApp(db, {
      routes: [
        ...jobRoutes,
        defineRoute({
          method: 'GET',
          path: '/api/jobs',
          summary: 'test list',
          access: { permission: 'jobs:read' },
          responses: { 200: { description: 'ok' } },
          handler: async (request) => {
            const visible = await app!.container.resolve(TOKENS.AccessPolicy).visibleIds(request.auth!, 'jobs:read', 'job');
            return { jobs: visible === 'all' ? JOBS : JOBS.filter((id) => visible.includes(id)) };
          },
        }),
      ],
    });
    const admin = await setUpAdmin(app);
    const group = await admin.call('POST', '/api/groups', {
      json: {
        name: 'operators',
        permissions: ['history:read'],
        grants: [
          { permission: 'jobs:execute', resourceType: 'job', resourceIds: ['job-a'] },
          { permission: 'jobs:read', resourceType: 'job', resourceIds: ['job-a', 'job-c'] },
        ],
      },
    });
    expect(group.status).toBe(201);
    expect(group.body.grants).toHaveLength(2);
    await admin.call('POST', '/api/users', { json: { name: 'Op', email: 'op@example.test', password: 'operator pass', groupId: group.body.id } });
    const op = new Client(app.url);
    await op.signIn('op@example.test', 'operator pass');

    expect((await op.call('POST', '/api/jobs/job-a/run')).body).toEqual({ ran: 'job-a' });
    expect(await op.call('POST', '/api/jobs/job-b/run')).toMatchObject({ status: 403, body: { error: 'Forbidden' } });
    expect((await op.call('GET', '/api/jobs')).body).toEqual({ jobs: ['job-a', 'job-c'] });
    expect((await admin.call('GET', '/api/jobs')).body).toEqual({ jobs: JOBS });
    expect((await admin.call('POST', '/api/jobs/job-b/run')).status).toBe(200);

    const session = (await op.call('GET', '/api/auth/session')).body;
    expect(session.permissions).toEqual(['history:read']);

    // A key can never carry more than its creator holds unscoped, and never a scoped grant.
    const tooMuch = await op.call('POST', '/api/api-keys', { json: { name: 'k', permissions: ['jobs:execute'] } });
    expect(tooMuch.status).toBe(403);
  });

  it('rejects grants with unknown resource types or permissions that cannot be scoped, naming them', async () => {
    db = await openDatabase('sqlite');
    app = await startIdentityApp(db);
    const admin = await setUpAdmin(app);
    const bad = await admin.call('POST', '/api/groups', {
      json: { name: 'x', permissions: ['jobs:fly'], grants: [{ permission: 'users:read', resourceType: 'job', resourceIds: ['a'] }, { permission: 'jobs:read', resourceType: 'planet', resourceIds: ['a'] }] },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('unknown permission "jobs:fly"');
    expect(bad.body.error).toContain('"users:read" cannot be scoped to job');
    expect(bad.body.error).toContain('unknown resource type "planet"');
    expect((await admin.call('GET', '/api/groups')).body.groups).toEqual([]);
  });
});

describe('users and groups over HTTP', () => {
  it('CRUD with permission checks; users:write cannot create super administrators; deleting a user removes their keys', async () => {
    db = await openDatabase('sqlite');
    app = await startIdentityApp(db);
    const admin = await setUpAdmin(app);
    const managers = (await admin.call('POST', '/api/groups', { json: { name: 'managers', permissions: ['users:read', 'users:write', 'api-keys:write'] } })).body;
    const created = await admin.call('POST', '/api/users', { json: { name: 'Mia', email: 'Mia@Example.test', password: 'mias password', groupId: managers.id } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ email: 'mia@example.test', groupId: managers.id, isSuperAdmin: false, dateFormat: 'P', timeFormat: 'p', autoRedirectOnJobStart: true, timezone: '' });
    expect((await admin.call('POST', '/api/users', { json: { name: 'Dup', email: 'mia@example.test' } })).status).toBe(409);
    expect((await admin.call('POST', '/api/users', { json: { name: 'Bad', email: 'not-an-email' } })).status).toBe(400);

    const mia = new Client(app.url);
    await mia.signIn('mia@example.test', 'mias password');
    expect((await mia.call('GET', '/api/users')).body.users).toHaveLength(2);
    expect((await mia.call('GET', '/api/groups')).status).toBe(403);
    expect((await mia.call('POST', '/api/users', { json: { name: 'Evil', email: 'evil@example.test', isSuperAdmin: true } })).status).toBe(403);
    const adminId = (await admin.call('GET', '/api/users/me')).body.id;
    expect((await mia.call('PUT', `/api/users/${adminId}`, { json: { name: 'pwned' } })).status).toBe(403);
    expect((await mia.call('PUT', `/api/users/${created.body.id}`, { json: { isSuperAdmin: true } })).status).toBe(403);

    const prefs = await mia.call('PUT', '/api/users/me', { json: { timezone: 'Europe/Berlin', dateFormat: 'dd.MM.yyyy', timeFormat: 'HH:mm', autoRedirectOnJobStart: false } });
    expect(prefs.body).toMatchObject({ timezone: 'Europe/Berlin', dateFormat: 'dd.MM.yyyy', timeFormat: 'HH:mm', autoRedirectOnJobStart: false });
    expect((await mia.call('PUT', '/api/users/me', { json: { timezone: 'Mars/Olympus' } })).status).toBe(400);

    const key = (await mia.call('POST', '/api/api-keys', { json: { name: 'mia key', permissions: ['users:read'] } })).body.key as string;
    expect((await new Client(app.url).call('GET', '/api/users', { bearer: key })).status).toBe(200);
    expect((await admin.call('DELETE', `/api/groups/${managers.id}`)).status).toBe(409);
    expect((await admin.call('DELETE', `/api/users/${created.body.id}`)).status).toBe(204);
    expect((await new Client(app.url).call('GET', '/api/users', { bearer: key })).status).toBe(401);
    expect((await mia.call('GET', '/api/users/me')).status).toBe(401);
    expect((await admin.call('GET', `/api/users/${created.body.id}`)).status).toBe(404);
    expect((await admin.call('DELETE', `/api/users/${adminId}`)).status).toBe(409);
    expect((await admin.call('DELETE', `/api/groups/${managers.id}`)).status).toBe(204);
  });

  it('GET /api/permissions describes every permission of the catalog', async () => {
    db = await openDatabase('sqlite');
    app = await startIdentityApp(db);
    const admin = await setUpAdmin(app);
    const { permissions } = (await admin.call('GET', '/api/permissions')).body as { permissions: { name: string; description: string }[] };
    const names = permissions.map((p) => p.name);
    for (const name of ['jobs:read', 'jobs:write', 'jobs:execute', 'history:read', 'dashboard:read', 'credentials:reveal', 'storage:download', 'audit:read', 'api-keys:write']) {
      expect(names).toContain(name);
    }
    expect(new Set(names).size).toBe(names.length);
    for (const entry of permissions) expect(entry.description.length).toBeGreaterThan(5);
  });
});
