import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN, liftRateLimits, startFullServer, type Caller, type FullServer } from './support/full-server.js';

/** Routes that may take a protected action (issue 45.4): a key without `allowBackupDeletion` gets 403 API_KEY_NOT_ALLOWED. */
const PROTECTED_ROUTES = [
  'DELETE /api/storage/{id}/files',
  'POST /api/storage/{id}/lock',
  'DELETE /api/adapters/{id}',
  'DELETE /api/vault/{id}',
  'PUT /api/jobs/{id}',
  'PUT /api/retention-policies/{id}',
  'POST /api/api-keys',
];

/** SPEC "Authentication" 10 plus the sign-in and setup endpoints: the only routes that answer without credentials. */
const ANONYMOUS_ROUTES = [
  'GET /api/health',
  'GET /api/storage/public-download',
  'POST /api/auth/sign-in',
  'POST /api/auth/sign-out',
  'POST /api/auth/setup',
  'GET /api/auth/status',
  // Second step of a password sign-in (the pending-sign-in cookie authorises) and passkey sign-in (issue 17).
  'POST /api/auth/two-factor/verify',
  'POST /api/auth/passkeys/sign-in/options',
  'POST /api/auth/passkeys/sign-in',
  // Single sign-on (issue 17): provider list, start, the IdP's redirect back, the SAML ACS and SP metadata.
  'GET /api/auth/sso/providers',
  'GET /api/auth/sso/entry',
  'GET /api/auth/sso/oidc/{providerId}/start',
  'GET /api/auth/sso/oidc/{providerId}/callback',
  'GET /api/auth/sso/saml/{providerId}/start',
  'POST /api/auth/sso/saml/{providerId}/acs',
  'GET /api/auth/sso/saml/{providerId}/metadata',
  // Prometheus scrapes without a session; an optional bearer token setting protects it (observability plugin, issue 18).
  'GET /metrics',
].sort();

interface Operation {
  method: string;
  path: string;
  /** The permission the route needs, or the ones of which it needs any (`x-permission-any-of`). */
  permissions: string[];
  isPublic: boolean;
  /** `x-session-only`: a browser session is required, every API key gets 403 (issue 10.3). */
  isSessionOnly: boolean;
}

/** Every mounted route, read from the OpenAPI document the server builds from its routes: new routes join by themselves. */
async function operationsOf(server: FullServer, admin: Caller): Promise<Operation[]> {
  const document = (await server.call('GET', '/api/openapi.json', admin)).body as {
    paths: Record<string, Record<string, { security?: unknown[]; 'x-permission'?: string; 'x-permission-any-of'?: string[]; 'x-session-only'?: boolean }>>;
  };
  const operations: Operation[] = [];
  for (const [path, methods] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(methods)) {
      operations.push({
        method: method.toUpperCase(),
        path,
        permissions: operation['x-permission'] ? [operation['x-permission']] : (operation['x-permission-any-of'] ?? []),
        isPublic: Array.isArray(operation.security) && operation.security.length === 0,
        isSessionOnly: operation['x-session-only'] === true,
      });
    }
  }
  return operations;
}

const concrete = (path: string) => path.replace(/\{[^}]+\}/g, 'no-such-record');
const bodyFor = (method: string) => (method === 'GET' || method === 'DELETE' ? undefined : {});

describe.each(['sqlite', 'postgresql'] as const)('route-permission matrix on %s', (dialect) => {
  let server: FullServer;
  let admin: Caller;
  let operations: Operation[];
  const keyWith = new Map<string, string>();

  beforeAll(async () => {
    server = await startFullServer(dialect);
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    operations = await operationsOf(server, admin);
    const permissions = [...new Set(operations.flatMap((o) => o.permissions))];
    for (const permission of [...permissions, 'audit:read', 'jobs:read']) {
      if (keyWith.has(permission)) continue;
      const issued = await server.call('POST', '/api/api-keys', admin, { name: `matrix ${permission}`, permissions: [permission] });
      expect(issued.status, JSON.stringify(issued.body)).toBe(201);
      keyWith.set(permission, issued.body.key ?? issued.body.rawKey);
    }
  }, 180_000);

  afterAll(async () => {
    await server?.close();
  });

  it('covers the routes of every feature plugin', () => {
    const paths = new Set(operations.map((o) => `${o.method} ${o.path}`));
    for (const expected of ['POST /api/jobs/{id}/run', 'GET /api/executions/{id}', 'GET /api/history', 'GET /api/api-keys', 'GET /api/adapters', 'GET /api/settings', 'GET /api/audit']) {
      expect(paths).toContain(expected);
    }
    expect(operations.length).toBeGreaterThan(60);
  });

  it('the assembled OpenAPI document of every plugin passes an OpenAPI 3.1 validator and has schemas for every operation', async () => {
    const document = (await server.call('GET', '/api/openapi.json', admin)).body;
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    const missing: string[] = [];
    for (const [path, methods] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(methods)) {
        // Browser sign-in steps (SSO start, callback, ACS) succeed with a redirect, never a 2xx.
        const ok = Object.entries(operation.responses ?? {}).find(([status]) => status.startsWith('2') || /^30[23]$/.test(status));
        if (!ok) missing.push(`${method} ${path}: no success response`);
        else if (!(ok[1] as any).content && ok[0] !== '204') missing.push(`${method} ${path}: success response without a schema`);
        if (['post', 'put', 'patch'].includes(method) && !operation.requestBody && !/sign-out|cancel|rotate|clone|reveal|run$|\/validate\//.test(path)) {
          missing.push(`${method} ${path}: no request body schema`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it('only the public routes of SPEC.md and the sign-in/setup endpoints are anonymous', () => {
    const anonymous = operations.filter((o) => o.isPublic).map((o) => `${o.method} ${o.path}`);
    expect(anonymous.filter((route) => !ANONYMOUS_ROUTES.includes(route))).toEqual([]);
    for (const route of ['GET /api/health', 'POST /api/auth/sign-in', 'POST /api/auth/setup']) expect(anonymous).toContain(route);
  });

  it('every other route answers 401 {"error":"Unauthorized"} without credentials', async () => {
    const failures: string[] = [];
    for (const operation of operations.filter((o) => !o.isPublic)) {
      const answer = await server.call(operation.method, concrete(operation.path), {}, bodyFor(operation.method));
      if (answer.status !== 401 || JSON.stringify(answer.body) !== '{"error":"Unauthorized"}') {
        failures.push(`${operation.method} ${operation.path} -> ${answer.status} ${JSON.stringify(answer.body)}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it('a valid key without the permission gets 403 {"error":"Forbidden"}; with it, neither 401 nor 403 nor a 5xx', async () => {
    const failures: string[] = [];
    for (const operation of operations.filter((o) => !o.isPublic && o.permissions.length > 0)) {
      const other = operation.permissions.includes('audit:read') ? 'jobs:read' : 'audit:read';
      const path = concrete(operation.path);
      const denied = await server.call(operation.method, path, { bearer: keyWith.get(other) }, bodyFor(operation.method));
      if (denied.status !== 403 || JSON.stringify(denied.body) !== '{"error":"Forbidden"}') {
        failures.push(`without ${operation.permissions.join('|')}: ${operation.method} ${operation.path} -> ${denied.status} ${JSON.stringify(denied.body)}`);
      }
      for (const permission of operation.permissions) {
        const allowed = await server.call(operation.method, path, { bearer: keyWith.get(permission) }, bodyFor(operation.method));
        // Issue 45.4: protected actions refuse a key created without allowBackupDeletion, whatever it holds.
        const isProtectedRefusal = allowed.status === 403 && allowed.body?.details?.code === 'API_KEY_NOT_ALLOWED';
        if (isProtectedRefusal && PROTECTED_ROUTES.includes(`${operation.method} ${operation.path}`)) continue;
        if (allowed.status === 401 || allowed.status === 403 || allowed.status >= 500) {
          failures.push(`with ${permission}: ${operation.method} ${operation.path} -> ${allowed.status} ${JSON.stringify(allowed.body)}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('routes that need only an identity accept any valid key', async () => {
    const failures: string[] = [];
    for (const operation of operations.filter((o) => !o.isPublic && !o.isSessionOnly && o.permissions.length === 0)) {
      const answer = await server.call(operation.method, concrete(operation.path), { bearer: keyWith.get('audit:read') }, bodyFor(operation.method));
      if (answer.status === 401 || answer.status === 403 || answer.status >= 500) {
        failures.push(`${operation.method} ${operation.path} -> ${answer.status} ${JSON.stringify(answer.body)}`);
      }
    }
    expect(failures).toEqual([]);
  });
});

describe.each(['sqlite', 'postgresql'] as const)('credential kinds across every route on %s', (dialect) => {
  let server: FullServer;
  let admin: Caller;
  let operations: Operation[];

  beforeAll(async () => {
    server = await startFullServer(dialect);
    admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    operations = await operationsOf(server, admin);
  }, 60_000);

  afterAll(async () => {
    await server?.close();
  });

  it('regression (issue 10.3): the session routes are session-only, and a key without permissions gets 403 on them and on every permission route', async () => {
    const sessionOnly = operations.filter((o) => o.isSessionOnly).map((o) => `${o.method} ${o.path}`).sort();
    // Managing one's own sign-in factors (issue 17) is session-only too: a key must not enroll or drop a factor.
    const ownFactors = [
      'DELETE /api/auth/passkeys/{id}',
      'GET /api/auth/passkeys',
      'GET /api/auth/two-factor',
      'PATCH /api/auth/passkeys/{id}',
      'POST /api/auth/passkeys',
      'POST /api/auth/passkeys/registration-options',
      'POST /api/auth/two-factor/backup-codes',
      'POST /api/auth/two-factor/confirm',
      'POST /api/auth/two-factor/disable',
      'POST /api/auth/two-factor/enroll',
      'PUT /api/auth/passkeys/two-factor',
      // Proving a second factor again for protected actions (issue 45.4).
      'GET /api/auth/step-up',
      'POST /api/auth/step-up',
      'POST /api/auth/step-up/passkey-options',
    ];
    // Changing one's own password (issue 47.5) is the browser sign-in too: a key must not change it.
    expect(sessionOnly.filter((route) => !ownFactors.includes(route))).toEqual(['DELETE /api/auth/sessions/{id}', 'GET /api/auth/sessions', 'PUT /api/users/me/password']);
    expect(sessionOnly.filter((route) => ownFactors.includes(route))).toEqual([...ownFactors].sort());
    const bare = await server.call('POST', '/api/api-keys', admin, { name: 'no permissions', permissions: [] });
    expect(bare.status, JSON.stringify(bare.body)).toBe(201);
    const everything = (await server.call('GET', '/api/permissions', admin)).body.permissions.map((p: { name: string }) => p.name);
    const full = await server.call('POST', '/api/api-keys', admin, { name: 'every permission', permissions: everything });
    expect(full.status, JSON.stringify(full.body)).toBe(201);
    const laptop = await server.signIn(ADMIN.email, ADMIN.password);
    const sessions = (await server.call('GET', '/api/auth/sessions', admin)).body.sessions as Array<{ id: string; isCurrent: boolean }>;
    const laptopSession = sessions.find((session) => !session.isCurrent)!;
    const failures: string[] = [];
    for (const operation of operations.filter((o) => !o.isPublic && (o.isSessionOnly || o.permissions.length > 0))) {
      const path = operation.path.replace('{id}', operation.isSessionOnly ? laptopSession.id : 'no-such-record').replace(/\{[^}]+\}/g, 'no-such-record');
      const answer = await server.call(operation.method, path, { bearer: bare.body.key }, bodyFor(operation.method));
      if (answer.status !== 403 || JSON.stringify(answer.body) !== '{"error":"Forbidden"}') failures.push(`bare key: ${operation.method} ${operation.path} -> ${answer.status}`);
      if (operation.isSessionOnly) {
        const withAll = await server.call(operation.method, path, { bearer: full.body.key }, bodyFor(operation.method));
        if (withAll.status !== 403) failures.push(`key with every permission: ${operation.method} ${operation.path} -> ${withAll.status}`);
      }
    }
    expect(failures).toEqual([]);
    // Nothing was revoked by the refused keys; the owner's session still lists and revokes.
    expect((await server.call('GET', '/api/auth/session', laptop)).status).toBe(200);
    expect((await server.call('DELETE', `/api/auth/sessions/${laptopSession.id}`, admin)).status).toBe(204);
    expect((await server.call('GET', '/api/auth/session', laptop)).status).toBe(401);
  });

  it('a signed-in user without a group holds no permission: 403 on every permission route, never a 5xx', async () => {
    const user = await server.call('POST', '/api/users', admin, { name: 'Nobody', email: 'nobody@example.test', password: 'nobody user pass' });
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const nobody = await server.signIn('nobody@example.test', 'nobody user pass');
    const failures: string[] = [];
    for (const operation of operations.filter((o) => !o.isPublic && o.permissions.length > 0)) {
      const answer = await server.call(operation.method, concrete(operation.path), nobody, bodyFor(operation.method));
      if (answer.status !== 403) failures.push(`${operation.method} ${operation.path} -> ${answer.status} ${JSON.stringify(answer.body)}`);
    }
    expect(failures).toEqual([]);
    const own = await server.call('GET', '/api/auth/sessions', nobody);
    expect(own.status).toBe(200);
    expect(own.body.sessions).toHaveLength(1);
  });
});

describe.each(['sqlite', 'postgresql'] as const)('scoped grants across plugins on %s', (dialect) => {
  let server: FullServer;

  afterAll(async () => {
    await server?.close();
  });

  it('a user allowed jobs:read and jobs:execute on job A only gets 403 on job B and sees only job A', async () => {
    server = await startFullServer(dialect);
    const admin = await server.signIn(ADMIN.email, ADMIN.password);
    await liftRateLimits(server, admin);
    const storageDir = await mkdtemp(join(tmpdir(), 'holdfast-scoped-'));
    const source = await server.call('POST', '/api/adapters', admin, { name: 'pg', type: 'database', adapterId: 'postgres', config: { user: 'root' } });
    expect(source.status, JSON.stringify(source.body)).toBe(201);
    const storage = await server.call('POST', '/api/adapters', admin, { name: 'disk', type: 'storage', adapterId: 'local', config: { path: storageDir } });
    expect(storage.status, JSON.stringify(storage.body)).toBe(201);
    const job = async (name: string) => {
      const created = await server.call('POST', '/api/jobs', admin, {
        name,
        schedule: '0 3 * * *',
        sourceId: source.body.id,
        databases: ['postgres'],
        destinations: [{ configId: storage.body.id }],
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return created.body.id as string;
    };
    const jobA = await job('A');
    const jobB = await job('B');
    const group = await server.call('POST', '/api/groups', admin, {
      name: 'only-a',
      permissions: [],
      grants: [
        { permission: 'jobs:read', resourceType: 'job', resourceIds: [jobA] },
        { permission: 'jobs:execute', resourceType: 'job', resourceIds: [jobA] },
      ],
    });
    expect(group.status, JSON.stringify(group.body)).toBe(201);
    const user = await server.call('POST', '/api/users', admin, { name: 'Scoped', email: 'scoped@example.test', password: 'scoped user pass', groupId: group.body.id });
    expect(user.status, JSON.stringify(user.body)).toBe(201);
    const scoped = await server.signIn('scoped@example.test', 'scoped user pass');

    const list = await server.call('GET', '/api/jobs', scoped);
    expect(list.status).toBe(200);
    const listed = (Array.isArray(list.body) ? list.body : list.body.jobs ?? list.body.data) as Array<{ id: string }>;
    expect(listed.map((j) => j.id)).toEqual([jobA]);
    expect((await server.call('GET', `/api/jobs/${jobA}`, scoped)).status).toBe(200);
    expect((await server.call('GET', `/api/jobs/${jobB}`, scoped)).status).toBe(403);
    const runB = await server.call('POST', `/api/jobs/${jobB}/run`, scoped, {});
    expect(runB.status).toBe(403);
    expect(runB.body).toEqual({ error: 'Forbidden' });
    // SPEC "Errors": triggering an unknown job is 404 with exactly this body.
    const unknown = await server.call('POST', '/api/jobs/no-such-job/run', admin, {});
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: 'Job not found' });
    const runA = await server.call('POST', `/api/jobs/${jobA}/run`, scoped, {});
    expect(runA.status, JSON.stringify(runA.body)).toBe(200);
    expect(runA.body).toMatchObject({ success: true, executionId: expect.any(String) });
  });
});
