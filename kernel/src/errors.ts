/** Stable error codes an adapter may raise; callers branch on the code, never on the message. */
/** LOCKED: the object is under an object lock (retention date or legal hold) and the store refuses to delete it. */
export const ADAPTER_ERROR_CODES = ['NOT_FOUND', 'AUTH', 'CONFIG', 'TRANSIENT', 'ABORTED', 'UNSUPPORTED', 'LOCKED'] as const;

/** One of {@link ADAPTER_ERROR_CODES}. */
export type AdapterErrorCode = (typeof ADAPTER_ERROR_CODES)[number];

/** Identity of an adapter as it appears in error messages: `<kind>-<id>`. */
export interface AdapterErrorOrigin {
  kind: string;
  id: string;
}

/**
 * The one error type adapters throw. The message is prefixed with `[<kind>-<id>]` so logs name the adapter,
 * and must never contain a secret.
 */
export class AdapterError extends Error {
  override readonly name = 'AdapterError';
  readonly code: AdapterErrorCode;
  readonly adapter: string;

  constructor(origin: AdapterErrorOrigin | string, code: AdapterErrorCode, message: string, options?: { cause?: unknown }) {
    const adapter = typeof origin === 'string' ? origin : `${origin.kind}-${origin.id}`;
    super(`[${adapter}] ${message}`, options);
    this.code = code;
    this.adapter = adapter;
  }
}

/** Identity by shape rather than `instanceof`, so errors survive duplicated package copies. */
export function isAdapterError(error: unknown): error is AdapterError {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { name?: unknown }).name === 'AdapterError' &&
    typeof (error as { code?: unknown }).code === 'string'
  );
}

/** True when the error (adapter or platform) means the operation was aborted through its signal. */
export function isAbortError(error: unknown): boolean {
  if (isAdapterError(error)) return error.code === 'ABORTED';
  const name = (error as { name?: unknown } | null)?.name;
  const code = (error as { code?: unknown } | null)?.code;
  return name === 'AbortError' || code === 'ABORT_ERR';
}

/** Errors that map to an HTTP status; plugins throw these and the http plugin's one error mapper answers them. */
export class HttpError extends Error {
  override readonly name: string = 'HttpError';
  readonly status: number;
  readonly details?: unknown;

  constructor(status: number, message: string, details?: unknown) {
    super(message);
    this.status = status;
    this.details = details;
  }
}

/** 400: the request is malformed; `details` lists the offending field paths. */
export class ValidationError extends HttpError {
  override readonly name = 'ValidationError';
  constructor(message: string, details?: unknown) {
    super(400, message, details);
  }
}

/** 401: no usable identity. The message is always `Unauthorized` to the caller. */
export class UnauthorizedError extends HttpError {
  override readonly name = 'UnauthorizedError';
  /** Internal reason (`disabled`, `expired`, ...); never sent to the caller. */
  readonly reason: string;
  constructor(reason = 'unauthenticated') {
    super(401, 'Unauthorized');
    this.reason = reason;
  }
}

/** 403: the identity lacks a permission. The missing permission is kept for logs, not sent. */
export class ForbiddenError extends HttpError {
  override readonly name = 'ForbiddenError';
  readonly permission?: string;
  constructor(permission?: string) {
    super(403, 'Forbidden');
    this.permission = permission;
  }
}

/** 404 with a message naming what was not found, e.g. `Job not found`. */
export class NotFoundError extends HttpError {
  override readonly name = 'NotFoundError';
  constructor(message: string) {
    super(404, message);
  }
}

/** 409: the change conflicts with existing state (a name taken, a record still in use). */
export class ConflictError extends HttpError {
  override readonly name = 'ConflictError';
  constructor(message: string, details?: unknown) {
    super(409, message, details);
  }
}
