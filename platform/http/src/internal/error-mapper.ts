import { HttpError, isAbortError, isAdapterError, type AdapterErrorCode } from '@holdfast/kernel';

/** The JSON error body of every failed API response. */
export interface ErrorBody {
  error: string;
  issues?: unknown;
  details?: unknown;
}

/** What the mapper decided: the status, the body to send and how loudly to log. */
export interface MappedError {
  status: number;
  body: ErrorBody;
  /** `error` for failures the operator must look at (5xx not caused by an upstream), otherwise `info`/`warn`. */
  logLevel: 'info' | 'warn' | 'error';
}

/** A status clients see when they went away before the answer (nginx's convention); only ever seen in logs. */
export const CLIENT_CLOSED_REQUEST = 499;

/**
 * AdapterError codes to statuses (decisions documented in docs/api/README.md). AUTH is 502, not 401: the
 * adapter could not sign in upstream, which says nothing about the caller's own credentials.
 */
const ADAPTER_STATUS: Record<AdapterErrorCode, number> = {
  NOT_FOUND: 404,
  CONFIG: 400,
  UNSUPPORTED: 400,
  AUTH: 502,
  TRANSIENT: 503,
  ABORTED: 409,
  // The store refuses: the object is under an object lock; the message names until when.
  LOCKED: 409,
};

const KERNEL_HTTP_ERROR_NAMES = new Set([
  'HttpError',
  'ValidationError',
  'UnauthorizedError',
  'ForbiddenError',
  'NotFoundError',
  'ConflictError',
  'TooManyRequestsError',
]);

/** Kernel HttpErrors by class or by shape, so a second copy of the kernel package still maps. */
function isKernelHttpError(error: unknown): error is HttpError {
  if (error instanceof HttpError) return true;
  if (typeof error !== 'object' || error === null) return false;
  const { name, status, message } = error as { name?: unknown; status?: unknown; message?: unknown };
  return typeof name === 'string' && KERNEL_HTTP_ERROR_NAMES.has(name) && typeof status === 'number' && typeof message === 'string';
}

/** http-errors style errors (koa, co-body, router) that were made to be shown to clients. */
function isExposedClientError(error: unknown): error is { status: number; message: string } {
  if (typeof error !== 'object' || error === null) return false;
  const { status, expose, message } = error as { status?: unknown; expose?: unknown; message?: unknown };
  return expose === true && typeof status === 'number' && status >= 400 && status < 500 && typeof message === 'string';
}

/** The one error mapper: everything a handler or middleware throws becomes a status and `{ error }`. */
export function mapError(error: unknown, isClientGone: boolean): MappedError {
  if (isKernelHttpError(error)) {
    const status = error.status >= 400 && error.status <= 599 ? error.status : 500;
    // 401 and a failed permission check never explain themselves (SPEC "Errors"): reasons and permissions stay in
    // the server log. A plain 403 HttpError is a deliberate refusal with its own message (e.g. email sign-in off).
    if (status === 401) return { status, body: { error: 'Unauthorized' }, logLevel: 'info' };
    if (status === 403 && error.name === 'ForbiddenError') return { status, body: { error: 'Forbidden' }, logLevel: 'info' };
    const body: ErrorBody = { error: error.message };
    if (error.details !== undefined) {
      if (status === 400 && Array.isArray(error.details)) body.issues = error.details;
      else body.details = error.details;
    }
    return { status, body, logLevel: status >= 500 ? 'error' : 'info' };
  }
  if (isAdapterError(error)) {
    if (error.code === 'ABORTED' && isClientGone) {
      return { status: CLIENT_CLOSED_REQUEST, body: { error: 'Client closed request' }, logLevel: 'info' };
    }
    const status = ADAPTER_STATUS[error.code] ?? 500;
    if (status === 500) return internalError();
    return { status, body: { error: error.message }, logLevel: status >= 500 ? 'warn' : 'info' };
  }
  if (isAbortError(error)) {
    return isClientGone
      ? { status: CLIENT_CLOSED_REQUEST, body: { error: 'Client closed request' }, logLevel: 'info' }
      : { status: 409, body: { error: 'The operation was cancelled' }, logLevel: 'warn' };
  }
  if (isExposedClientError(error)) return { status: error.status, body: { error: error.message }, logLevel: 'info' };
  return internalError();
}

function internalError(): MappedError {
  return { status: 500, body: { error: 'Internal server error' }, logLevel: 'error' };
}
