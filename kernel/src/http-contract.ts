import type { Readable } from 'node:stream';
import type { z } from 'zod';

/** HTTP methods routes may use. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The identity of a request after the one authentication step (SPEC "Authentication" 3). */
export interface AuthContext {
  userId: string;
  permissions: string[];
  isSuperAdmin: boolean;
  authMethod: 'session' | 'apikey';
  apiKeyId?: string;
  /** Display name of the actor: user name or API key name. */
  actorName?: string;
}

/**
 * Who may call a route: `public` needs nothing; otherwise an identity, holding `permission` when set. `scope`
 * names the resource a path parameter identifies, so a grant limited to some resources is enforced.
 */
export type RouteAccess =
  | { public: true }
  | {
      public?: false;
      permission?: string;
      /**
       * For routes whose exact permission depends on the request (e.g. the adapter type): the caller must hold at
       * least one of these; the handler then checks the exact one.
       */
      anyPermission?: readonly string[];
      scope?: { resource: string; param: string };
      /**
       * Only a browser session may call the route; an API key gets 403 whatever its permissions. For routes that
       * manage the sign-in itself (listing and revoking sessions), which no permission of the catalog covers.
       */
      sessionOnly?: boolean;
    };

/** Framework-neutral request as a handler sees it; params/query/body are already parsed by their schemas. */
export interface RouteRequest<P = unknown, Q = unknown, B = unknown> {
  params: P;
  query: Q;
  body: B;
  auth: AuthContext | null;
  ip: string;
  userAgent: string | undefined;
  /** The request arrived over TLS (directly, or per `X-Forwarded-Proto` when the proxy is trusted). */
  secure: boolean;
  headers: Readonly<Record<string, string | string[] | undefined>>;
  signal: AbortSignal;
}

/** What a handler returns when it needs more than a JSON body: status, headers or a stream. */
export interface RouteResult {
  status?: number;
  headers?: Record<string, string>;
  body?: unknown;
  /** A stream body (downloads, server-sent events); `body` is ignored when set. */
  stream?: Readable;
}

/** Marks a handler result as a full {@link RouteResult}; a plain value is sent as the JSON body with 200. */
export function routeResult(result: RouteResult): RouteResult & { __routeResult: true } {
  return Object.assign(result, { __routeResult: true as const });
}

/** Whether a handler's value is a {@link routeResult}. */
export function isRouteResult(value: unknown): value is RouteResult {
  return typeof value === 'object' && value !== null && (value as { __routeResult?: unknown }).__routeResult === true;
}

/**
 * One HTTP route, declared by a plugin without importing koa. The http plugin mounts it, validates params, query
 * and body with the schemas (400 with field paths on failure), runs the permission check, and derives the OpenAPI
 * operation from the same schemas.
 */
export interface RouteDefinition<
  P extends z.ZodType = z.ZodType,
  Q extends z.ZodType = z.ZodType,
  B extends z.ZodType = z.ZodType,
> {
  method: HttpMethod;
  /** koa-router path, e.g. `/api/jobs/:id`. */
  path: string;
  summary: string;
  tags?: string[];
  access: RouteAccess;
  /** Rate-limit class; defaults by method (GET: api, others: mutation). */
  rateLimit?: 'auth' | 'api' | 'mutation' | 'none';
  /**
   * `bodyType: 'form'` reads the body as `application/x-www-form-urlencoded` instead of JSON, for the few public
   * routes a third party's browser form posts to (SAML assertion consumer service). Default `json`.
   */
  request?: { params?: P; query?: Q; body?: B; bodyType?: 'json' | 'form' };
  /** Response schemas by status code (documentation and, in tests, conformance). */
  responses: Record<number, { description: string; schema?: z.ZodType; contentType?: string }>;
  handler: (request: RouteRequest<z.output<P>, z.output<Q>, z.output<B>>) => Promise<unknown> | unknown;
}

/** Identity helper that keeps the schema types flowing into the handler. */
export function defineRoute<P extends z.ZodType, Q extends z.ZodType, B extends z.ZodType>(
  route: RouteDefinition<P, Q, B>,
): RouteDefinition {
  return route as unknown as RouteDefinition;
}
