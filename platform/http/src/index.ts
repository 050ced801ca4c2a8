export { createHttpApp, HTTP_FALLTHROUGH_HANDLER, type HttpAppOptions } from './create-http-app.js';
export { buildOpenApiDocument, operationIdOf, toOpenApiPath, SECURITY_SCHEMES, type OpenApiInfo } from './openapi.js';
export { createSseStream, formatServerSentEvent, SSE_HEADERS, type ServerSentEvent, type SseStream, type SseStreamOptions } from './sse.js';
export { mountedRoutesOf } from './internal/mounted-routes.js';
export { mapError, CLIENT_CLOSED_REQUEST, type ErrorBody, type MappedError } from './internal/error-mapper.js';
export { TooManyRequestsError } from './internal/access-steps.js';
export { MethodNotAllowedError } from './internal/fallbacks.js';
export { DEFAULT_BODY_LIMIT_BYTES } from './internal/json-body.js';
export type { ValidationIssue } from './internal/validation.js';
