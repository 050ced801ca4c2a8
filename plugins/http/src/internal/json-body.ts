import { HttpError, ValidationError } from '@holdfast/kernel';
import type { Context } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';

/** Default limit of a JSON request body. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

/** JSON media types accepted as request bodies. */
const JSON_TYPES = ['application/json', 'application/merge-patch+json'];

/** Human-readable size for the 413 message: `1 MB`, `512 KB`. */
function describeBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${bytes} bytes`;
}

/**
 * Reads a JSON request body with a size limit and turns the parser's errors into the API's errors. Only JSON is
 * parsed (no forms, no multipart): routes that accept uploads take them as streams, never through this reader.
 * Returns `undefined` when the request carries no body at all.
 */
export function createJsonBodyReader(limitBytes: number): (ctx: Context) => Promise<unknown> {
  const parse = koaBody({
    json: true,
    jsonLimit: limitBytes,
    jsonStrict: true,
    jsonTypes: JSON_TYPES,
    urlencoded: false,
    text: false,
    multipart: false,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
  });
  return async (ctx) => {
    // `Content-Length: 0` (what fetch sends for a bodiless POST) is no body, whatever the content type says.
    if (ctx.request.length === 0) return undefined;
    // `ctx.is()` is null for a request without a body and false for a body of another media type.
    const bodyType = ctx.request.is(JSON_TYPES);
    if (bodyType === null) return undefined;
    if (bodyType === false) {
      throw new HttpError(415, `Unsupported content type: send the request body as application/json`);
    }
    try {
      await parse(ctx as never, async () => undefined);
    } catch (error) {
      throw translateParserError(error, limitBytes);
    }
    return ctx.request.body;
  };
}

/** co-body/raw-body errors carry `status` and `type`; their messages may quote the body, so none is passed on. */
function translateParserError(error: unknown, limitBytes: number): Error {
  const { status, type, message } = (error ?? {}) as { status?: unknown; type?: unknown; message?: unknown };
  if (status === 413 || type === 'entity.too.large') {
    return new HttpError(413, `Request body too large: the limit is ${describeBytes(limitBytes)}`);
  }
  if (typeof message === 'string' && message.includes('prototype property')) {
    // @hapi/bourne (inside co-body) refuses `__proto__` keys before we ever see the object.
    return new ValidationError('Invalid request: body: contains a forbidden __proto__ key', [
      { path: 'body', message: 'contains a forbidden __proto__ key' },
    ]);
  }
  if (type === 'encoding.unsupported' || status === 415) {
    return new HttpError(415, 'Unsupported content encoding of the request body');
  }
  if (type === 'request.aborted') return new HttpError(400, 'Request body was cut off before it was complete');
  if (status === 400) return new HttpError(400, 'Malformed JSON in request body');
  return error instanceof Error ? error : new Error(String(error));
}
