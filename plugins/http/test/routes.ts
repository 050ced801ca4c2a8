// Routes declared the way plugins declare them, one per part of the route contract the OpenAPI document shows
// (public query, permission and body, scoped path parameter, event stream, error route). The library's own tests
// of these parts are in platform/http/test.
import { AdapterError, defineRoute, routeResult, type AdapterErrorCode, type RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import { createSseStream, SSE_HEADERS } from '@holdfast/http-server';

const thingSchema = z.object({
  name: z.string().min(1),
  tags: z.array(z.string()).default([]),
  size: z.object({ bytes: z.number().int().nonnegative() }).optional(),
});

export const publicEcho = defineRoute({
  method: 'GET',
  path: '/api/public/echo',
  summary: 'Echoes its parsed query',
  access: { public: true },
  request: { query: z.object({ page: z.coerce.number().int().min(1).default(1), verbose: z.stringbool().optional() }) },
  responses: { 200: { description: 'The parsed query', schema: z.object({ page: z.number(), verbose: z.boolean().optional() }) } },
  handler: ({ query }) => ({ query }),
});

export const createThing = defineRoute({
  method: 'POST',
  path: '/api/things',
  summary: 'Creates a thing',
  tags: ['things'],
  access: { permission: 'things:write' },
  request: { body: thingSchema },
  responses: { 201: { description: 'Created', schema: thingSchema.extend({ createdBy: z.string() }) } },
  handler: ({ body, auth }) => routeResult({ status: 201, headers: { Location: '/api/things/1' }, body: { ...body, createdBy: auth?.userId } }),
});

export const readJob = defineRoute({
  method: 'GET',
  path: '/api/jobs/:id',
  summary: 'Reads one job (scoped grant)',
  tags: ['jobs'],
  access: { permission: 'jobs:read', scope: { resource: 'job', param: 'id' } },
  request: { params: z.object({ id: z.string().regex(/^job-\d+$/, 'must look like job-<number>') }) },
  responses: { 200: { description: 'The job', schema: z.object({ id: z.string() }) } },
  handler: ({ params }) => ({ id: params.id }),
});

export const failAdapter = defineRoute({
  method: 'GET',
  path: '/api/fail/adapter/:code',
  summary: 'Throws an AdapterError with the code of the path',
  access: { public: true },
  responses: {},
  handler: ({ params }) => {
    throw new AdapterError({ kind: 'storage', id: 'sftp' }, (params as { code: AdapterErrorCode }).code, 'host refused');
  },
});

export const events = defineRoute({
  method: 'GET',
  path: '/api/public/events',
  summary: 'Server-sent events that never end on their own',
  access: { public: true },
  responses: { 200: { description: 'Event stream', contentType: 'text/event-stream' } },
  handler: ({ signal }) => {
    const sse = createSseStream({ keepAliveMs: 30, signal });
    sse.send({ event: 'hello', id: '1', data: { step: 1 } });
    return routeResult({ headers: { ...SSE_HEADERS }, stream: sse.stream });
  },
});

export const ALL_TEST_ROUTES: RouteDefinition[] = [publicEcho, createThing, readJob, failAdapter, events];
