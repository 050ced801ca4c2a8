import type { RouteDefinition } from '@holdfast/kernel';
import type { Context, Middleware } from 'koa';
import type { DependencyContainer } from 'tsyringe';
import { authorise, limitAndAuthenticate } from './access-steps.js';
import { requestStateOf } from './request-context.js';
import { writeHandlerResult } from './respond.js';
import { parseRequestParts } from './validation.js';
import { readFormBody } from './form-body.js';

/** What every route shares: the container the ports are resolved from and the body reader. */
export interface RoutePipelineDeps {
  container: DependencyContainer;
  readJsonBody: (ctx: Context) => Promise<unknown>;
}

/**
 * The per-route steps, in the order the architecture fixes: rate limit -> authenticate (a browser session's reads:
 * the other way round, see {@link limitAndAuthenticate}) -> authorise -> read and validate -> handle. The body is read only after authorisation so anonymous clients cannot make the server parse
 * megabytes of JSON.
 */
export function createRoutePipeline(route: RouteDefinition, deps: RoutePipelineDeps): Middleware {
  const { container, readJsonBody } = deps;
  return async (ctx) => {
    const auth = await limitAndAuthenticate(ctx, container, route);
    const rawParams: Record<string, string> = { ...(ctx as { params?: Record<string, string> }).params };
    if (auth) await authorise(container, route, auth, rawParams);

    const bodySchema = route.request?.body;
    const rawBody = bodySchema ? await (route.request?.bodyType === 'form' ? readFormBody(ctx) : readJsonBody(ctx)) : undefined;
    // koa's query object has a null prototype; a plain copy keeps handlers from meeting that surprise.
    const rawQuery: Record<string, unknown> = { ...ctx.query };
    const parsed = await parseRequestParts([
      { part: 'params', schema: route.request?.params, value: rawParams },
      { part: 'query', schema: route.request?.query, value: rawQuery },
      { part: 'body', schema: bodySchema, value: rawBody },
    ]);

    const result = await route.handler({
      params: parsed.params,
      query: parsed.query,
      body: parsed.body,
      auth,
      ip: ctx.ip,
      userAgent: ctx.get('User-Agent') || undefined,
      secure: ctx.secure,
      headers: ctx.headers,
      signal: requestStateOf(ctx).signal,
    });
    writeHandlerResult(ctx, result);
  };
}
