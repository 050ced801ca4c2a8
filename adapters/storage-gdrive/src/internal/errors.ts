import { AdapterError, type AdapterErrorCode } from '@holdfast/sdk';

/** How this adapter names itself in errors. */
export const GDRIVE_ORIGIN = { kind: 'storage', id: 'gdrive' } as const;

/** An error answer of the Drive API: status, the first `errors[].reason` and the message of its JSON body. */
export class DriveApiError extends Error {
  override readonly name = 'DriveApiError';
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly detail: string,
  ) {
    super(`HTTP ${status}${reason ? ` ${reason}` : ''}${detail ? `: ${detail}` : ''}`);
  }

  get isNotFound(): boolean {
    return this.status === 404;
  }
}

/** Reads `{ "error": { "code", "message", "errors": [{ "reason" }] } }` (or a plain-text body). */
export async function apiErrorOf(response: Response): Promise<DriveApiError> {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: { message?: string; errors?: Array<{ reason?: string }>; status?: string } | string; error_description?: string };
    if (body.error && typeof body.error === 'object') {
      return new DriveApiError(response.status, body.error.errors?.[0]?.reason ?? body.error.status ?? '', (body.error.message ?? '').slice(0, 300));
    }
  } catch {
    // not JSON
  }
  return new DriveApiError(response.status, '', text.slice(0, 300));
}

const HINTS: Record<string, string> = {
  authError: 'the access token is invalid or expired and could not be renewed: re-authorize and update the OAUTH credential profile',
  insufficientPermissions: 'the token lacks a scope: authorize with https://www.googleapis.com/auth/drive.file (or drive)',
  ACCESS_TOKEN_SCOPE_INSUFFICIENT: 'the token lacks a scope: authorize with https://www.googleapis.com/auth/drive.file (or drive)',
  storageQuotaExceeded: 'the Drive storage quota is used up',
  notFound: 'the file or folder does not exist or the app may not see it (drive.file only sees what the app created)',
  userRateLimitExceeded: 'Drive is rate limiting this app; try again later',
  rateLimitExceeded: 'Drive is rate limiting this app; try again later',
};

function codeOf(error: DriveApiError): AdapterErrorCode {
  if (error.isNotFound) return 'NOT_FOUND';
  if (/RateLimitExceeded|rateLimitExceeded|backendError/.test(error.reason) || error.status === 429 || error.status >= 500) return 'TRANSIENT';
  if (error.status === 401 || error.status === 403) return 'AUTH';
  if (error.status === 400 || error.status === 416) return 'CONFIG';
  return 'TRANSIENT';
}

/** Maps an API, network or abort error to an AdapterError; `what` names the failed operation. */
export function toAdapterError(error: unknown, what: string): AdapterError {
  if (error instanceof AdapterError) return error;
  if (error instanceof DriveApiError) {
    const hint = HINTS[error.reason];
    return new AdapterError(GDRIVE_ORIGIN, codeOf(error), `${what}: ${error.message}${hint ? ` (${hint})` : ''}`, { cause: error });
  }
  const raw = error as { name?: string; message?: string; cause?: { code?: string; message?: string } } | null;
  if (raw?.name === 'AbortError' || raw?.name === 'TimeoutError') {
    return new AdapterError(GDRIVE_ORIGIN, raw.name === 'AbortError' ? 'ABORTED' : 'TRANSIENT', `${what}: ${raw.name === 'AbortError' ? 'aborted' : 'timed out'}`, { cause: error });
  }
  const cause = raw?.cause?.code ?? raw?.cause?.message ?? raw?.message ?? String(error);
  return new AdapterError(GDRIVE_ORIGIN, 'TRANSIENT', `${what}: cannot reach Google Drive (${cause})`, { cause: error });
}

/** The error of a missing object. */
export function notFound(key: string): AdapterError {
  return new AdapterError(GDRIVE_ORIGIN, 'NOT_FOUND', `object "${key}" does not exist`);
}

/** The error of an aborted operation. */
export function aborted(what: string, cause?: unknown): AdapterError {
  return new AdapterError(GDRIVE_ORIGIN, 'ABORTED', `${what} was aborted`, { cause });
}
