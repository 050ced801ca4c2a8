import { AdapterError, type AdapterErrorCode } from '@holdfast/sdk';

/** How this adapter names itself in errors. */
export const WEBDAV_ORIGIN = { kind: 'storage', id: 'webdav' } as const;

/** An HTTP answer other than the ones a request expects. */
export class DavStatusError extends Error {
  constructor(
    readonly status: number,
    readonly method: string,
  ) {
    super(`${method} answered HTTP ${status}`);
  }
}

function statusOf(error: unknown): number | undefined {
  const status = (error as { status?: unknown } | null)?.status;
  return typeof status === 'number' ? status : undefined;
}

function fromStatus(status: number, method: string): { code: AdapterErrorCode; reason: string } {
  const answered = `${method} answered HTTP ${status}`.trimStart();
  if (status === 401) return { code: 'AUTH', reason: `the server refused the username or password (${answered})` };
  if (status === 403) return { code: 'AUTH', reason: `permission denied (${answered}); the login may not write here` };
  if (status === 404) return { code: 'NOT_FOUND', reason: `not found (${answered})` };
  if (status === 507) return { code: 'TRANSIENT', reason: `the server is out of space or over quota (${answered})` };
  if (status >= 500 || status === 408 || status === 423 || status === 429) return { code: 'TRANSIENT', reason: `server error (${answered})` };
  return { code: 'CONFIG', reason: `unexpected answer (${answered}); is the url a WebDAV endpoint?` };
}

/** True for an error that means "no such resource". */
export function isMissing(error: unknown): boolean {
  return statusOf(error) === 404;
}

/**
 * Maps a webdav-client, fetch, socket or HTTP status error to an AdapterError with a stable code; `what` names the
 * failed operation. The config schema forbids credentials in the url, so fetch messages (which quote the url) are safe.
 */
export function toAdapterError(error: unknown, what: string): AdapterError {
  if (error instanceof AdapterError) return error;
  const raw = error as { name?: string; code?: unknown; message?: string } | null;
  const status = statusOf(error);
  if (status !== undefined) {
    const { code, reason } = fromStatus(status, error instanceof DavStatusError ? error.method : '');
    return new AdapterError(WEBDAV_ORIGIN, code, `${what}: ${reason}`, { cause: error });
  }
  if (raw?.name === 'AbortError' || raw?.code === 'ABORT_ERR') return new AdapterError(WEBDAV_ORIGIN, 'ABORTED', `${what} was aborted`, { cause: error });
  if (typeof raw?.code === 'string' && /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(raw.code)) {
    return new AdapterError(WEBDAV_ORIGIN, 'CONFIG', `${what}: the https certificate was not accepted (${raw.code}); trust it or set rejectUnauthorized to false`, { cause: error });
  }
  // Connection refused/reset, DNS failures, TLS problems: worth a retry later, the config may well be right.
  return new AdapterError(WEBDAV_ORIGIN, 'TRANSIENT', `${what}: ${raw?.message ?? String(error)}`, { cause: error });
}

/** The error of a missing object. */
export function notFound(key: string): AdapterError {
  return new AdapterError(WEBDAV_ORIGIN, 'NOT_FOUND', `object "${key}" does not exist`);
}
