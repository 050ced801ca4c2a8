import type { Context, Middleware } from 'koa';
import { randomUUID } from 'node:crypto';
import type pino from 'pino';

/** What the app keeps per request in `ctx.state`. */
export interface RequestState {
  requestId: string;
  /** Aborted when the client disconnects before the response finished. */
  signal: AbortSignal;
}

const STATE_KEY = 'holdfast';

/** The request state set by {@link requestContext}. */
export function requestStateOf(ctx: Context): RequestState {
  return (ctx.state as Record<string, RequestState>)[STATE_KEY] as RequestState;
}

/** A caller's request id is kept only when it is short and harmless in logs and headers. */
const ACCEPTABLE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Assigns the request id, the abort signal and the one request log line. The line is written when the response
 * closes, so streamed downloads log their real duration. It carries the path only: query strings can hold
 * download tokens, and headers and bodies can hold credentials, so none of them is logged.
 */
export function requestContext(logger: pino.Logger): Middleware {
  return async (ctx, next) => {
    const startedAt = performance.now();
    const incoming = ctx.get('X-Request-Id');
    const requestId = ACCEPTABLE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    const abort = new AbortController();
    (ctx.state as Record<string, RequestState>)[STATE_KEY] = { requestId, signal: abort.signal };
    ctx.set('X-Request-Id', requestId);

    ctx.res.once('close', () => {
      const isComplete = ctx.res.writableFinished;
      if (!isComplete) abort.abort();
      const status = ctx.res.statusCode;
      const line = {
        requestId,
        method: ctx.method,
        path: ctx.path,
        status,
        durationMs: Math.round((performance.now() - startedAt) * 10) / 10,
        ...(isComplete ? {} : { clientClosed: true }),
      };
      if (status >= 500) logger.error(line, 'request');
      else logger.info(line, 'request');
    });
    await next();
  };
}
