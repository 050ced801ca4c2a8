import { afterEach, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '@holdfast/http-server';
import { identityRoutes } from '../src/routes/index.js';
import { openDatabase, type TestDatabase } from './support/database.js';
import { startIdentityApp, type RunningIdentityApp } from './support/http.js';

let db: TestDatabase | undefined;
let app: RunningIdentityApp | undefined;
afterEach(async () => {
  await app?.close();
  await db?.close();
  app = undefined;
  db = undefined;
});

type Operation = { description?: string; requestBody?: unknown; responses?: Record<string, unknown> };

describe('OpenAPI', () => {
  it('every identity route appears in the http plugin\'s document with its permission, body and responses', async () => {
    db = await openDatabase('sqlite');
    app = await startIdentityApp(db);
    const routes = identityRoutes(app.services);
    const document = buildOpenApiDocument(routes, { version: '0.1.0' }) as unknown as { paths: Record<string, Record<string, Operation>> };
    const operations = Object.values(document.paths).flatMap((byMethod) => Object.values(byMethod));
    expect(operations).toHaveLength(routes.length);
    for (const path of ['/api/auth/sign-in', '/api/auth/setup', '/api/users/{id}', '/api/groups', '/api/api-keys/{id}/rotate', '/api/audit', '/api/permissions']) {
      expect(Object.keys(document.paths)).toContain(path);
    }
    expect(document.paths['/api/audit']!.get!.description).toContain('audit:read');
    expect(document.paths['/api/api-keys']!.post!.requestBody).toBeDefined();
    expect(Object.keys(document.paths['/api/api-keys']!.post!.responses!)).toEqual(expect.arrayContaining(['201', '400', '401', '403']));
  });
});
