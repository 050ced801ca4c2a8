import { Validator } from '@seriousme/openapi-schema-validator';
import { afterEach, describe, expect, it } from 'vitest';
import { buildOpenApiDocument } from '@holdfast/http-server';
import { createHttpPlugin } from '../src/index.js';
import { ALL_TEST_ROUTES, createThing, readJob } from './routes.js';
import { at, call, FakeAuthenticator, startWithPlugin, type RunningApp } from './support.js';

let running: RunningApp | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

describe('GET /api/health', () => {
  it('answers 200 ok with version, database dialect and uptime when the database answers', async () => {
    running = await startWithPlugin({ version: '1.2.3', isReachable: async () => true });
    const response = await call(`${running.url}/api/health`);
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      status: 'ok',
      version: '1.2.3',
      database: { reachable: true, dialect: 'postgresql' },
      uptimeSeconds: expect.any(Number),
    });
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it.each([
    ['resolves false', async () => false],
    ['rejects', async () => Promise.reject(new Error('ECONNREFUSED 127.0.0.1:5432'))],
  ])('answers 503 degraded when isReachable %s', async (_label, isReachable) => {
    running = await startWithPlugin({ version: '1.2.3', isReachable });
    const response = await call(`${running.url}/api/health`);
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({ status: 'degraded', version: '1.2.3', database: { reachable: false, dialect: 'postgresql' } });
    expect(response.text).not.toMatch(/ECONNREFUSED/);
  });
});

describe('GET /api/openapi.json', () => {
  it('serves a valid OpenAPI 3.1 document covering every mounted route', async () => {
    running = await startWithPlugin({ version: '1.2.3', authenticator: new FakeAuthenticator() });
    expect((await call(`${running.url}/api/openapi.json`)).status).toBe(401);
    const response = await call(`${running.url}/api/openapi.json`, { token: 'nobody' });
    expect(response.status).toBe(200);
    const document = response.body;

    const validator = new Validator();
    const result = await validator.validate(document as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');

    expect(at(document, 'info', 'version')).toBe('1.2.3');
    const paths = Object.keys(at(document, 'paths') as object);
    const mounted = ['/api/health', '/api/openapi.json', '/api/things', '/api/jobs/{id}', '/api/public/events', '/api/fail/adapter/{code}'];
    for (const path of mounted) expect(paths).toContain(path);
    expect(paths.some((path) => path.includes(':'))).toBe(false);
  });

  it('documents parameters, bodies, responses, security and permissions from the route declarations', () => {
    const pluginRoutes = createHttpPlugin().routes?.({ isRegistered: () => false } as never) ?? [];
    const document = buildOpenApiDocument([...pluginRoutes, ...ALL_TEST_ROUTES], { version: '9.9.9' });
    const operation = (path: string, method: string): unknown => at(document, 'paths', path, method);

    const health = operation('/api/health', 'get');
    expect(at(health, 'security')).toEqual([]);
    expect(at(health, 'responses', '503', 'content', 'application/json', 'schema', 'properties', 'status', 'enum')).toEqual(['ok', 'degraded']);

    const create = operation('/api/things', 'post');
    expect(at(create, 'x-permission')).toBe('things:write');
    expect(at(create, 'description')).toContain('things:write');
    expect(at(create, 'security')).toEqual([{ session: [] }, { apiKey: [] }]);
    expect(at(create, 'requestBody', 'content', 'application/json', 'schema', 'required')).toEqual(['name']);
    expect(Object.keys(at(create, 'responses') as object).sort()).toEqual(['201', '400', '401', '403', '413', '429', '500']);

    const job = operation('/api/jobs/{id}', 'get');
    expect(at(job, 'parameters')).toEqual([expect.objectContaining({ in: 'path', name: 'id', required: true })]);
    expect(at(job, 'x-permission-scope')).toEqual({ resource: 'job', param: 'id' });

    const echoParameters = at(operation('/api/public/echo', 'get'), 'parameters') as Array<{ name: string; in: string }>;
    expect(echoParameters.map((p) => `${p.in}:${p.name}`).sort()).toEqual(['query:page', 'query:verbose']);
    expect(Object.keys(at(operation('/api/public/echo', 'get'), 'responses') as object)).not.toContain('401');

    expect(Object.keys(at(operation('/api/public/events', 'get'), 'responses', '200', 'content') as object)).toEqual(['text/event-stream']);
    expect(at(operation('/api/fail/adapter/{code}', 'get'), 'parameters')).toEqual([expect.objectContaining({ in: 'path', name: 'code' })]);

    expect(at(document, 'components', 'securitySchemes', 'apiKey')).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(at(document, 'components', 'securitySchemes', 'session')).toMatchObject({ type: 'apiKey', in: 'cookie' });
    const operationIds = Object.values(document.paths ?? {}).flatMap((item) =>
      Object.values(item as object).map((op) => at(op, 'operationId')),
    );
    expect(new Set(operationIds).size).toBe(operationIds.length);
    expect(operationIds).toContain('getJobsById');
  });

  it('grows with the routes: a document of fewer routes has fewer paths', () => {
    const small = buildOpenApiDocument([createThing], { version: '1.0.0' });
    const larger = buildOpenApiDocument([createThing, readJob], { version: '1.0.0' });
    expect(Object.keys(small.paths ?? {})).toEqual(['/api/things']);
    expect(Object.keys(larger.paths ?? {})).toEqual(['/api/things', '/api/jobs/{id}']);
  });
});
