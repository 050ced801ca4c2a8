import { HttpError } from '@holdfast/kernel';
import coBody from 'co-body';
import type { Context } from 'koa';

/** A form post is small (a SAML response is a few KB); anything larger is refused. */
const FORM_LIMIT_BYTES = 256 * 1024;

/**
 * Reads an `application/x-www-form-urlencoded` body into flat string fields, for routes declaring
 * `request.bodyType: 'form'`. Repeated or bracketed names are not expanded into nested objects (`qs` depth 0).
 */
export async function readFormBody(ctx: Context): Promise<unknown> {
  if (ctx.request.length === 0) return {};
  const bodyType = ctx.request.is('application/x-www-form-urlencoded');
  if (bodyType === null) return {};
  if (bodyType === false) throw new HttpError(415, 'Unsupported content type: send the request body as application/x-www-form-urlencoded');
  try {
    return (await coBody.form(ctx.req, { limit: FORM_LIMIT_BYTES, queryString: { depth: 0, parameterLimit: 50 } })) as unknown;
  } catch (error) {
    const { status, type } = (error ?? {}) as { status?: unknown; type?: unknown };
    if (status === 413 || type === 'entity.too.large') throw new HttpError(413, 'Request body too large: the limit is 256 KB');
    throw new HttpError(400, 'Malformed form body');
  }
}
