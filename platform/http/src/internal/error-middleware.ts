import type { Middleware } from 'koa';
import type pino from 'pino';
import { mapError } from './error-mapper.js';
import { requestStateOf } from './request-context.js';

/** Internal reasons worth a log line that the caller never sees (`UnauthorizedError.reason`, missing permission). */
function hiddenReason(error: unknown): Record<string, unknown> {
  const { reason, permission } = (error ?? {}) as { reason?: unknown; permission?: unknown };
  return {
    ...(typeof reason === 'string' ? { reason } : {}),
    ...(typeof permission === 'string' ? { permission } : {}),
  };
}

/**
 * Catches everything below it and answers through the one error mapper. Unexpected errors are logged with their
 * stack here and reach the caller only as `Internal server error`.
 */
export function errorResponder(logger: pino.Logger): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      const state = requestStateOf(ctx);
      const mapped = mapError(error, state.signal.aborted);
      const context = { requestId: state.requestId, method: ctx.method, path: ctx.path, status: mapped.status };
      if (mapped.logLevel === 'error') logger.error({ ...context, err: error }, 'request failed');
      else if (mapped.logLevel === 'warn') logger.warn({ ...context, err: error }, 'request failed');
      else logger.debug({ ...context, ...hiddenReason(error) }, 'request rejected');
      if (ctx.headerSent || !ctx.writable) return;
      ctx.status = mapped.status;
      ctx.type = 'application/json';
      ctx.body = JSON.stringify(mapped.body);
    }
  };
}
