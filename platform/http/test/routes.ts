// Routes declared the way plugins declare them, exercising every part of the route contract.
import { AdapterError, ConflictError, defineRoute, routeResult, type AdapterErrorCode, type RouteDefinition } from '@holdfast/kernel';
import { Readable } from 'node:stream';
import { z } from 'zod';
import { createSseStream, SSE_HEADERS } from '../src/index.js';

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

export const listThings = defineRoute({
  method: 'GET',
  path: '/api/things',
  summary: 'Lists things (any identity)',
  tags: ['things'],
  access: {},
  responses: { 200: { description: 'Who asked', schema: z.object({ userId: z.string() }) } },
  handler: ({ auth }) => ({ userId: auth?.userId }),
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

export const looseBody = defineRoute({
  method: 'POST',
  path: '/api/public/loose',
  summary: 'Accepts any object (prototype pollution probe)',
  access: { public: true },
  rateLimit: 'auth',
  request: { body: z.looseObject({}) },
  responses: { 200: { description: 'What the server saw' } },
  handler: ({ body }) => ({
    keys: Object.keys(body as object),
    isPolluted: ({} as Record<string, unknown>).isPolluted === true,
  }),
});

export const failInternal = defineRoute({
  method: 'GET',
  path: '/api/fail/internal',
  summary: 'Throws an unexpected error carrying a secret',
  access: { public: true },
  responses: {},
  handler: () => {
    throw new Error('connect failed for postgres://holdfast:hunter2@db.internal/holdfast');
  },
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

export const failConflict = defineRoute({
  method: 'GET',
  path: '/api/fail/conflict',
  summary: 'Throws a ConflictError with details',
  access: { public: true },
  responses: {},
  handler: () => {
    throw new ConflictError('Name already taken', { field: 'name' });
  },
});

export const plainText = defineRoute({
  method: 'GET',
  path: '/api/public/text',
  summary: 'Returns a plain string, which must still be JSON',
  access: { public: true },
  responses: { 200: { description: 'A string', schema: z.string() } },
  handler: () => '<script>alert(1)</script>',
});

export const nothing = defineRoute({
  method: 'DELETE',
  path: '/api/public/nothing',
  summary: 'Returns nothing',
  access: { public: true },
  rateLimit: 'none',
  responses: { 204: { description: 'Done' } },
  handler: () => undefined,
});

export const download = defineRoute({
  method: 'GET',
  path: '/api/public/download',
  summary: 'Streams a generated file',
  access: { public: true },
  responses: { 200: { description: 'Bytes', contentType: 'application/octet-stream' } },
  handler: () =>
    routeResult({
      headers: { 'Content-Type': 'application/octet-stream', 'Content-Disposition': 'attachment; filename="data.bin"' },
      stream: Readable.from((function* () {
        for (let index = 0; index < 64; index += 1) yield Buffer.alloc(1024, index);
      })()),
    }),
});

/** Holds the stream of the last SSE request so a test can watch it close when the client leaves. */
export const sseProbe: { closed?: Promise<void>; aborted?: Promise<void> } = {};

export const events = defineRoute({
  method: 'GET',
  path: '/api/public/events',
  summary: 'Server-sent events that never end on their own',
  access: { public: true },
  responses: { 200: { description: 'Event stream', contentType: 'text/event-stream' } },
  handler: ({ signal }) => {
    const sse = createSseStream({ keepAliveMs: 30, signal });
    sseProbe.closed = new Promise((resolve) => sse.stream.once('close', () => resolve()));
    sseProbe.aborted = new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    sse.send({ event: 'hello', id: '1', data: { step: 1 } });
    return routeResult({ headers: { ...SSE_HEADERS }, stream: sse.stream });
  },
});

export const ALL_TEST_ROUTES: RouteDefinition[] = [
  publicEcho, listThings, createThing, readJob, looseBody, failInternal, failAdapter, failConflict, plainText,
  nothing, download, events,
];
