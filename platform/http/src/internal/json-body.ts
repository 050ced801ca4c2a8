import { HttpError, ValidationError } from '@holdfast/kernel';
import coBody from 'co-body';
import type { Context } from 'koa';
import { checkJsonNesting, MAX_JSON_DEPTH } from './json-shape.js';

/** Default limit of a JSON request body. */
export const DEFAULT_BODY_LIMIT_BYTES = 1024 * 1024;

/** JSON media types accepted as request bodies. */
const JSON_TYPES = ['application/json', 'application/merge-patch+json'];

/** RFC 8259 text that is an object or an array (the API takes no bare scalars as bodies). */
const STRICT_JSON_START = /^[\x20\x09\x0a\x0d]*(\[|\{)/;

/** Human-readable size for the 413 message: `1 MB`, `512 KB`. */
function describeBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KB`;
  return `${bytes} bytes`;
}

/** One 400 naming the whole body, the shape every validation failure has. */
function invalidBody(message: string): ValidationError {
  return new ValidationError(`Invalid request: body: ${message}`, [{ path: 'body', message }]);
}

/**
 * Reads a JSON request body with a size limit and turns the reader's errors into the API's errors. Only JSON is
 * parsed (no forms, no multipart): routes that accept uploads take them as streams, never through this reader.
 * Returns `undefined` when the request carries no body at all.
 *
 * The bytes are read raw (not decoded by the reader) so that invalid UTF-8 is refused instead of being turned into
 * U+FFFD and stored, and the nesting depth is measured on the text before `JSON.parse` sees it, so a body of 100k
 * `[` costs one linear scan and never a deep recursion anywhere.
 */
export function createJsonBodyReader(limitBytes: number): (ctx: Context) => Promise<unknown> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  return async (ctx) => {
    // `Content-Length: 0` (what fetch sends for a bodiless POST) is no body, whatever the content type says.
    if (ctx.request.length === 0) return undefined;
    // `ctx.is()` is null for a request without a body and false for a body of another media type.
    const bodyType = ctx.request.is(JSON_TYPES);
    if (bodyType === null) return undefined;
    if (bodyType === false) {
      throw new HttpError(415, `Unsupported content type: send the request body as application/json`);
    }
    let bytes: Buffer;
    try {
      // `encoding: false` makes raw-body hand back the bytes; the typings only know the string form.
      bytes = (await coBody.text(ctx.req, { limit: limitBytes, encoding: false as never })) as unknown as Buffer;
    } catch (error) {
      throw translateReaderError(error, limitBytes);
    }
    let text: string;
    try {
      text = decoder.decode(bytes);
    } catch {
      throw invalidBody('is not valid UTF-8');
    }
    if (text.length === 0) return {};
    if (!STRICT_JSON_START.test(text)) throw new HttpError(400, 'Malformed JSON in request body');
    const depth = checkJsonNesting(text);
    if (depth > MAX_JSON_DEPTH) throw invalidBody(`nests deeper than ${MAX_JSON_DEPTH} levels`);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new HttpError(400, 'Malformed JSON in request body');
    }
  };
}

/** raw-body/inflation errors carry `status` and `type`; their messages may quote the body, so none is passed on. */
function translateReaderError(error: unknown, limitBytes: number): Error {
  const { status, type } = (error ?? {}) as { status?: unknown; type?: unknown };
  if (status === 413 || type === 'entity.too.large') {
    return new HttpError(413, `Request body too large: the limit is ${describeBytes(limitBytes)}`);
  }
  if (type === 'encoding.unsupported' || status === 415) {
    return new HttpError(415, 'Unsupported content encoding of the request body');
  }
  if (type === 'request.aborted') return new HttpError(400, 'Request body was cut off before it was complete');
  if (status === 400) return new HttpError(400, 'Malformed request body');
  return error instanceof Error ? error : new Error(String(error));
}
