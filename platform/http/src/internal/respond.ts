import { isRouteResult } from '@holdfast/kernel';
import type { Context } from 'koa';

const EVENT_STREAM = 'text/event-stream';

function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const key = Object.keys(headers).find((candidate) => candidate.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

/**
 * Plain values are always JSON, even strings: koa would send a string as text/html, which would let a handler
 * returning user text open a cross-site-scripting hole.
 */
function sendJson(ctx: Context, status: number, value: unknown): void {
  ctx.status = status;
  if (value === undefined) {
    ctx.body = null;
    if (status === 200) ctx.status = 204;
    return;
  }
  ctx.type = 'application/json';
  ctx.body = JSON.stringify(value);
}

/** Writes what a handler returned: a plain value (200 JSON) or a `routeResult()` with status, headers or a stream. */
export function writeHandlerResult(ctx: Context, value: unknown): void {
  if (!isRouteResult(value)) {
    sendJson(ctx, 200, value);
    return;
  }
  const headers = value.headers ?? {};
  for (const [name, header] of Object.entries(headers)) ctx.set(name, header);
  const status = value.status ?? 200;
  if (value.stream) {
    ctx.status = status;
    const contentType = headerValue(headers, 'content-type') ?? 'application/octet-stream';
    ctx.type = contentType;
    if (contentType.startsWith(EVENT_STREAM)) prepareEventStream(ctx);
    ctx.body = value.stream;
    return;
  }
  const contentType = headerValue(headers, 'content-type');
  if (contentType && (typeof value.body === 'string' || Buffer.isBuffer(value.body))) {
    ctx.status = status;
    ctx.type = contentType;
    ctx.body = value.body;
    return;
  }
  sendJson(ctx, status, value.body);
}

/**
 * Server-sent events must reach the client event by event: no buffering in reverse proxies (X-Accel-Buffering,
 * no-transform), no Nagle delay, and no idle socket timeout ending a quiet stream.
 */
function prepareEventStream(ctx: Context): void {
  ctx.set('Cache-Control', 'no-cache, no-transform');
  ctx.set('X-Accel-Buffering', 'no');
  ctx.set('Connection', 'keep-alive');
  ctx.req.socket.setNoDelay(true);
  ctx.req.socket.setTimeout(0);
  // koa-compress and similar middleware read this flag; an event stream must never be compressed.
  (ctx as { compress?: boolean }).compress = false;
}
