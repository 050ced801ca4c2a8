import type { RouteDefinition } from '@holdfast/kernel';
import { z } from 'zod';
import {
  createDocument,
  type oas31,
  type ZodOpenApiOperationObject,
  type ZodOpenApiPathsObject,
  type ZodOpenApiResponseObject,
  type ZodOpenApiResponsesObject,
} from 'zod-openapi';
import { rateLimitClassOf } from './internal/access-steps.js';

/** Document-level settings of {@link buildOpenApiDocument}. */
export interface OpenApiInfo {
  /** Release number of the running server. */
  version: string;
  title?: string;
  /** Name of the session cookie the identity plugin sets (documentation only; default `holdfast_session`). */
  sessionCookieName?: string;
}

/** Security scheme names used in the document. */
export const SECURITY_SCHEMES = { bearer: 'apiKey', cookie: 'session' } as const;

const errorBodySchema = z
  .object({
    error: z.string().describe('What went wrong, in words meant for people.'),
    issues: z
      .array(z.object({ path: z.string(), message: z.string() }))
      .optional()
      .describe('Validation failures by field path (400 only).'),
    details: z.unknown().optional(),
  })
  .meta({ id: 'ErrorBody' });

/** `/api/jobs/:id/run` -> `/api/jobs/{id}/run` (path-to-regexp names to OpenAPI templates). */
export function toOpenApiPath(path: string): string {
  return path.replace(/:([A-Za-z_$][\w$]*)/g, '{$1}');
}

/** Names of the `:param` segments of a route path. */
export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z_$][\w$]*)/g)].map((match) => match[1] as string);
}

/** `POST /api/jobs/:id/run` -> `postJobsByIdRun`: stable names for the generated client. */
export function operationIdOf(route: RouteDefinition): string {
  const words = route.path
    .split('/')
    .filter((segment) => segment !== '' && segment !== 'api')
    .map((segment) => (segment.startsWith(':') ? `by-${segment.slice(1)}` : segment))
    .flatMap((segment) => segment.split(/[^A-Za-z0-9]+/))
    .filter((word) => word !== '');
  const pascal = words.map((word) => word.charAt(0).toUpperCase() + word.slice(1)).join('');
  return `${route.method.toLowerCase()}${pascal}`;
}

/** Every `:param` of the path must be documented; params the route left unvalidated are plain strings. */
function pathParamsSchema(route: RouteDefinition): z.ZodObject | undefined {
  const names = pathParamNames(route.path);
  const declared = route.request?.params;
  const shape: Record<string, z.ZodType> = {};
  for (const name of names) shape[name] = z.string();
  if (declared instanceof z.ZodObject) return declared.extend(Object.fromEntries(
    names.filter((name) => !(name in declared.shape)).map((name) => [name, z.string()]),
  ));
  return names.length > 0 ? z.object(shape) : undefined;
}

function errorResponse(description: string): ZodOpenApiResponseObject {
  return { description, content: { 'application/json': { schema: errorBodySchema } } };
}

function responsesOf(route: RouteDefinition): ZodOpenApiResponsesObject {
  const responses: Record<string, ZodOpenApiResponseObject> = {};
  for (const [status, response] of Object.entries(route.responses)) {
    const contentType = response.contentType ?? 'application/json';
    const hasContent = response.schema !== undefined || response.contentType !== undefined;
    responses[status] = {
      description: response.description,
      ...(hasContent ? { content: { [contentType]: response.schema ? { schema: response.schema } : {} } } : {}),
    };
  }
  // The failures the app itself produces are part of every route's contract; routes may describe them better.
  const implied: Array<[string, string, boolean]> = [
    ['400', 'Invalid request: the field paths are listed in `issues`.', route.request !== undefined],
    ['401', 'Unauthorized: no session cookie or API key, or an invalid one.', route.access.public !== true],
    ['403', 'Forbidden: the identity lacks the permission.', route.access.public !== true && !!route.access.permission],
    ['413', 'Request body too large.', route.request?.body !== undefined],
    ['429', 'Too many requests; see the Retry-After header.', rateLimitClassOf(route, route.method) !== 'none'],
    ['500', 'Internal server error.', true],
  ];
  for (const [status, description, applies] of implied) {
    if (applies && responses[status] === undefined) responses[status] = errorResponse(description);
  }
  return responses as ZodOpenApiResponsesObject;
}

function operationOf(route: RouteDefinition): ZodOpenApiOperationObject {
  const access = route.access;
  const isPublic = access.public === true;
  const permission = !isPublic ? access.permission : undefined;
  const scope = !isPublic ? access.scope : undefined;
  const anyPermission = !isPublic && !permission ? access.anyPermission : undefined;
  const isSessionOnly = !isPublic && access.sessionOnly === true;
  const description = isPublic
    ? 'Public: no authentication.'
    : isSessionOnly
      ? 'Requires a signed-in browser session (cookie); API keys are refused with 403.'
      : permission
      ? `Requires the permission \`${permission}\`${scope ? ` on the ${scope.resource} named by \`${scope.param}\`` : ''}.`
      : anyPermission?.length
        ? `Requires one of ${anyPermission.map((p) => `\`${p}\``).join(', ')}, as the request decides.`
        : 'Requires an authenticated session or API key.';
  const path = pathParamsSchema(route);
  const query = route.request?.query;
  const operation: ZodOpenApiOperationObject = {
    operationId: operationIdOf(route),
    summary: route.summary,
    description,
    ...(route.tags ? { tags: route.tags } : {}),
    security: isPublic ? [] : isSessionOnly ? [{ [SECURITY_SCHEMES.cookie]: [] }] : [{ [SECURITY_SCHEMES.cookie]: [] }, { [SECURITY_SCHEMES.bearer]: [] }],
    ...(path || query
      ? { requestParams: { ...(path ? { path } : {}), ...(query ? { query: query as z.ZodObject } : {}) } }
      : {}),
    ...(route.request?.body
      ? { requestBody: { required: true, content: { [route.request.bodyType === 'form' ? 'application/x-www-form-urlencoded' : 'application/json']: { schema: route.request.body } } } }
      : {}),
    responses: responsesOf(route),
  };
  if (permission) operation['x-permission'] = permission;
  if (scope) operation['x-permission-scope'] = scope;
  if (anyPermission?.length) operation['x-permission-any-of'] = [...anyPermission];
  if (isSessionOnly) operation['x-session-only'] = true;
  return operation;
}

/**
 * Generates the OpenAPI 3.1 document of the mounted routes from their zod schemas. Query schemas must be zod
 * objects; their fields arrive as strings and so use `z.coerce` for numbers and booleans.
 */
export function buildOpenApiDocument(routes: readonly RouteDefinition[], info: OpenApiInfo): oas31.OpenAPIObject {
  const paths: ZodOpenApiPathsObject = {};
  for (const route of routes) {
    const item = (paths[toOpenApiPath(route.path)] ??= {});
    item[route.method.toLowerCase() as 'get'] = operationOf(route);
  }
  return createDocument({
    openapi: '3.1.0',
    info: { title: info.title ?? 'Holdfast API', version: info.version },
    paths,
    components: {
      securitySchemes: {
        [SECURITY_SCHEMES.bearer]: {
          type: 'http',
          scheme: 'bearer',
          description: 'An API key (`svc_key_...`) sent as `Authorization: Bearer <key>`.',
        },
        [SECURITY_SCHEMES.cookie]: {
          type: 'apiKey',
          in: 'cookie',
          name: info.sessionCookieName ?? 'holdfast_session',
          description: 'The session cookie set at sign-in; tried before the bearer key.',
        },
      },
    },
  });
}
