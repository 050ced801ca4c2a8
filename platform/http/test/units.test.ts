import { AdapterError, ForbiddenError, HttpError, NotFoundError, UnauthorizedError, ValidationError } from '@holdfast/kernel';
import { describe, expect, it } from 'vitest';
import { createSseStream, formatServerSentEvent, mapError, operationIdOf, toOpenApiPath } from '../src/index.js';
import { createThing, readJob } from './routes.js';

describe('mapError', () => {
  it('maps kernel HttpErrors, keeping issues on 400 and hiding 401/403 reasons', () => {
    expect(mapError(new NotFoundError('Job not found'), false)).toMatchObject({ status: 404, body: { error: 'Job not found' } });
    const issues = [{ path: 'body.name', message: 'required' }];
    expect(mapError(new ValidationError('Invalid request: body.name: required', issues), false).body).toEqual({
      error: 'Invalid request: body.name: required',
      issues,
    });
    expect(mapError(new UnauthorizedError('disabled'), false).body).toEqual({ error: 'Unauthorized' });
    expect(mapError(new ForbiddenError('jobs:execute'), false).body).toEqual({ error: 'Forbidden' });
  });

  it('lets a deliberate 403 refusal carry its own message, unlike a failed permission check', () => {
    expect(mapError(new HttpError(403, 'Email sign-in is disabled on this server'), false)).toMatchObject({
      status: 403,
      body: { error: 'Email sign-in is disabled on this server' },
    });
  });

  it('recognises an HttpError from another copy of the kernel by its shape', () => {
    const foreign = Object.assign(new Error('Job not found'), { name: 'NotFoundError', status: 404 });
    expect(mapError(foreign, false)).toMatchObject({ status: 404, body: { error: 'Job not found' } });
  });

  it('treats an HttpError with a status outside 4xx/5xx as an internal error status', () => {
    expect(mapError(new HttpError(302, 'moved'), false).status).toBe(500);
  });

  it('maps an aborted operation to 499 when the client left and 409 otherwise', () => {
    const aborted = new AdapterError('storage-s3', 'ABORTED', 'upload aborted');
    expect(mapError(aborted, true).status).toBe(499);
    expect(mapError(aborted, false)).toMatchObject({ status: 409, body: { error: '[storage-s3] upload aborted' } });
    expect(mapError(new DOMException('aborted', 'AbortError'), false)).toMatchObject({ status: 409 });
  });

  it('turns anything else into a bare 500 logged at error level', () => {
    expect(mapError(new TypeError('cannot read secret of undefined'), false)).toEqual({
      status: 500,
      body: { error: 'Internal server error' },
      logLevel: 'error',
    });
    expect(mapError('a thrown string', false).body).toEqual({ error: 'Internal server error' });
  });
});

describe('OpenAPI naming', () => {
  it('converts router paths to templates and derives operation ids', () => {
    expect(toOpenApiPath('/api/jobs/:id/runs/:runId')).toBe('/api/jobs/{id}/runs/{runId}');
    expect(operationIdOf(readJob)).toBe('getJobsById');
    expect(operationIdOf(createThing)).toBe('postThings');
  });
});

describe('server-sent events format', () => {
  it('splits multi-line data into data lines and flattens line breaks in other fields', () => {
    expect(formatServerSentEvent({ event: 'log\nline', data: 'one\ntwo' })).toBe('event: log line\ndata: one\ndata: two\n\n');
    expect(formatServerSentEvent({ data: { a: 1 }, retry: 2500.7 })).toBe('retry: 2500\ndata: {"a":1}\n\n');
  });

  it('stops accepting events once closed and closes when its signal aborts', async () => {
    const controller = new AbortController();
    const sse = createSseStream({ signal: controller.signal, keepAliveMs: 60_000 });
    const chunks: string[] = [];
    sse.stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString()));
    const ended = new Promise((resolve) => sse.stream.once('end', resolve));
    expect(sse.send({ data: 'first' })).toBe(true);
    controller.abort();
    expect(sse.isClosed).toBe(true);
    expect(sse.send({ data: 'late' })).toBe(false);
    await ended;
    expect(chunks.join('')).toBe('data: first\n\n');
  });
});
